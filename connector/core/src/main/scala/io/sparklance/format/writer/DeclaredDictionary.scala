package io.sparklance.format.writer

import io.sparklance.LanceErrors
import io.sparklance.format.{LanceField, LogicalType}
import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV20Protos.{ArrayEncoding, Binary, Dictionary}

/**
 * Fields of an Arrow dictionary type (`dict:<values>:<keys>`, a pandas Categorical or
 * `dictionary_encode()`), written as pylance 14.0.2 writes them, since its reader decodes
 * such a field only from dictionary pages whose keys have the declared key width:
 *  - 2.1/2.2: every page that holds a value is a mini-block page with a dictionary; the
 *    keys are fixed-width values of the key type's width, compressed as any such values
 *    (RLE, bitpacking or flat); the dictionary is a block (`Variable` or `Flat`, in 2.2
 *    wrapped in LZ4); nulls are def levels. A page of nulls only is a constant page.
 *  - 2.0: `Dictionary{indices: Nullable(NoNull(Flat <key bits>)), items, n}`, a null row
 *    indexing a null entry appended after the values (pylance's `arrow_dictionary_to_data_block`).
 * Entries are numbered in order of first appearance within the page. A key type indexes a
 * bounded number of entries (128 for int8, 256 for uint8, ...), and pylance's reader merges
 * the dictionaries of the pages one batch spans, up to a whole file: so a file holds at most
 * that many distinct values of the column ([[FileDictionaryLimits]]).
 */
private[writer] object DeclaredDictionary {
  def of(f: LanceField): Option[LogicalType.Dictionary] = f.logicalType match {
    case d: LogicalType.Dictionary => Some(d)
    case _ => None
  }

  /** Bytes of one key. */
  def keyWidth(column: String, d: LogicalType.Dictionary): Int = d.index match {
    case LogicalType.Int8 | LogicalType.UInt8 => 1
    case LogicalType.Int16 | LogicalType.UInt16 => 2
    case LogicalType.Int32 | LogicalType.UInt32 => 4
    case LogicalType.Int64 | LogicalType.UInt64 => 8
    case other => throw LanceErrors.unsupportedType(
        column,
        d.text,
        s"a dictionary's keys must be integers, not ${other.text}"
      )
  }

  /**
   * Distinct non-null values one file may hold: the entries the key type can index, less
   * the null entry a 2.0 page may need; None when no file can reach it.
   */
  def capacity(d: LogicalType.Dictionary, version: FileVersion): Option[Int] = {
    val keys = d.index match {
      case LogicalType.Int8 => 128
      case LogicalType.UInt8 => 256
      case LogicalType.Int16 => 32768
      case LogicalType.UInt16 => 65536
      case _ => return None
    }
    Some(if (version.minor == 0) keys - 1 else keys)
  }

  /** Checks that the value type has a dictionary form this writer (and pylance) knows. */
  def checkValues(column: String, d: LogicalType.Dictionary, vals: LeafValues): Unit = vals match {
    case f: FixedValuesBuf if !f.bool =>
    case _: VarValuesBuf =>
    case _ => throw LanceErrors.unsupportedType(
        column,
        d.text,
        s"dictionaries of ${d.value.text} values cannot be written"
      )
  }

  private def notDictionaryValues =
    new IllegalArgumentException("dictionary values must be fixed or variable width")

  /** Entry numbers of a page's values (0 for nulls) and the entries, in order of appearance. */
  final class Entries(val keys: Array[Int], val entries: DistinctValues)

  /** Numbers the values of `vals`; `isNull(k)` (null: none) marks the nulls, which take 0. */
  def number(vals: LeafValues, isNull: Array[Boolean]): Entries = {
    val n = vals.count
    val keys = new Array[Int](n)
    val seen = new DistinctValues()
    var k = 0
    vals match {
      case f: FixedValuesBuf =>
        val a = f.data.array; val w = f.width
        while (k < n) {
          if (isNull == null || !isNull(k)) keys(k) = seen.getOrAdd(a, k * w, w)
          k += 1
        }
      case v: VarValuesBuf =>
        val a = v.data.array
        while (k < n) {
          if (isNull == null || !isNull(k)) keys(k) = seen.getOrAdd(a, v.offsets(k), v.length(k))
          k += 1
        }
      case _ => throw notDictionaryValues
    }
    new Entries(keys, seen)
  }

  /** `keys` as little-endian integers of `width` bytes. */
  def keyBytes(keys: Array[Int], n: Int, width: Int): Array[Byte] = {
    val out = new Array[Byte](n * width)
    var k = 0
    width match {
      case 1 => while (k < n) { out(k) = keys(k).toByte; k += 1 }
      case 2 => while (k < n) { LE.putI16(out, 2 * k, keys(k).toShort); k += 1 }
      case 4 => while (k < n) { LE.putI32(out, 4 * k, keys(k)); k += 1 }
      case _ => while (k < n) { LE.putI64(out, 8 * k, keys(k).toLong); k += 1 }
    }
    out
  }

  /** A 2.1/2.2 page's dictionary block for `e`'s entries of values shaped as `vals`. */
  def block(
      e: Entries,
      vals: LeafValues,
      params: EncodingParams,
      version: FileVersion
  ): MiniBlockEncoder.Dictionary = {
    val count = e.entries.size
    vals match {
      case v: VarValuesBuf =>
        DictionaryEncoder.varBlock(
          e.entries.bytes,
          e.entries.offsets,
          count,
          v.large,
          params,
          version
        )
      case f: FixedValuesBuf =>
        DictionaryEncoder.wrap(e.entries.bytes, Encodings.flat(f.width * 8), params, version, count)
      case _ => throw notDictionaryValues
    }
  }

  /**
   * A 2.0 page of `n` rows (`nulls(i)` != 0 for a null row): buffer 0 the keys, then the
   * items' buffers, and its encoding.
   */
  def v20Page(
      column: String,
      d: LogicalType.Dictionary,
      vals: LeafValues,
      nulls: Array[Byte],
      n: Int
  ): (Seq[ByteBuf], ArrayEncoding) = {
    val isNull = new Array[Boolean](n)
    var anyNull = false
    var i = 0
    while (i < n) { if (nulls(i) != 0) { isNull(i) = true; anyNull = true }; i += 1 }
    val e = number(vals, isNull)
    val values = e.entries.size
    // Null rows index an entry of their own after the values.
    if (anyNull) { i = 0; while (i < n) { if (isNull(i)) e.keys(i) = values; i += 1 } }
    val items = if (anyNull) values + 1 else values
    val width = keyWidth(column, d)
    val keys = new ByteBuf(n * width + 8)
    keys.bytes(keyBytes(e.keys, n, width))
    val keysEnc = V20ColumnWriter.noNulls(V20ColumnWriter.flat(width * 8, 0))
    val store = e.entries.bytes
    val (itemBufs, itemsEnc) = vals match {
      case _: VarValuesBuf =>
        val adj = store.size.toLong + 1
        val ends = new ByteBuf(8 * items + 8)
        i = 1
        while (i <= values) { ends.u64(e.entries.start(i).toLong); i += 1 }
        if (anyNull) ends.u64(store.size.toLong + adj)
        val bytes = new ByteBuf(store.size + 8)
        bytes.bytes(store.array, 0, store.size)
        (
          Seq(ends, bytes),
          ArrayEncoding.newBuilder().setBinary(Binary.newBuilder()
            .setIndices(V20ColumnWriter.noNulls(V20ColumnWriter.flat(64, 1)))
            .setBytes(V20ColumnWriter.flat(8, 2))
            .setNullAdjustment(adj)).build()
        )
      case f: FixedValuesBuf =>
        val data = new ByteBuf(items * f.width + 8)
        data.bytes(store.array, 0, store.size)
        if (!anyNull) (Seq(data), V20ColumnWriter.noNulls(V20ColumnWriter.flat(f.width * 8, 1)))
        else {
          data.zeros(f.width)
          val valid = new Array[Byte](items)
          java.util.Arrays.fill(valid, 0, values, 1.toByte)
          val validity = new ByteBuf(items / 8 + 8)
          MiniBlockEncoder.bitmap(valid, 0, items, validity)
          (
            Seq(validity, data),
            V20ColumnWriter.someNulls(
              V20ColumnWriter.flat(1, 1),
              V20ColumnWriter.flat(f.width * 8, 2)
            )
          )
        }
      case _ => throw notDictionaryValues
    }
    val enc = ArrayEncoding.newBuilder().setDictionary(Dictionary.newBuilder()
      .setIndices(keysEnc).setItems(itemsEnc).setNumDictionaryItems(items)).build()
    (keys +: itemBufs, enc)
  }
}
