package io.sparklance.format.legacy

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.format._
import io.sparklance.storage.RandomAccessInput

/**
 * Decodes rows `[s, e)` of one field's page in one batch of a legacy file, reading only the
 * bytes those rows occupy. Encodings follow the field type (as the Rust reader does):
 *   - PLAIN: raw values, no nulls; bool as an LSB-first bitmap; fixed-size lists flattened;
 *   - VAR_BINARY: the bytes, then n+1 int64 *absolute file positions*; the page points at the
 *     positions. A nullable field reads an empty value as null;
 *   - DICTIONARY: PLAIN keys; the values stored once per file (`Field.dictionary`);
 *   - list / large_list: an int32 / int64 offsets page (n+1 values, PLAIN) then the child field,
 *     whose page in the same batch holds all the batch's items;
 *   - struct: no page of its own, children only.
 */
final class LegacyPageDecoder(input: RandomAccessInput, layout: LegacyLayout) {

  private val dictionaries = scala.collection.mutable.HashMap[Int, ColumnArray]()

  def decode(
      field: LanceField,
      shape: ValueShape,
      batch: Int,
      s: Long,
      e: Long,
      ctx: PageContext
  ): ColumnArray = ctx.guard {
    val n = (e - s).toInt
    shape match {
      case ValueShape.Nulls => new NullArray(n)
      case ValueShape.Struct(children) =>
        new StructArray(
          n,
          null,
          children.map { case (c, cs) => child(c, cs, batch, s, e, ctx) }.toArray
        )
      case ValueShape.VarList(item, itemShape) =>
        val large =
          field.logicalType == LogicalType.LargeList || field.logicalType == LogicalType.ListOfStruct(
            true
          )
        val w = if (large) 8 else 4
        val raw = plainRange(field, batch, s, e + 1, w, ctx)
        val bb = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN)
        val pos = new Array[Long](n + 1)
        var i = 0
        while (i <= n) {
          pos(i) = if (large) bb.getLong(i * 8) else bb.getInt(i * 4).toLong; i += 1
        }
        val base = pos(0)
        val offsets = new Array[Int](n + 1)
        i = 0
        while (i <= n) {
          val o = pos(i) - base
          ctx.check(
            o >= 0 && o <= Int.MaxValue - 16 && (i == 0 || pos(i) >= pos(i - 1)),
            s"list offset ${pos(i)} of row ${s + i} is out of order"
          )
          offsets(i) = o.toInt
          i += 1
        }
        val items = child(item, itemShape, batch, base, pos(n), ctx)
        new ListArray(n, null, offsets, items)
      case ValueShape.Var =>
        field.logicalType match {
          case d: LogicalType.Dictionary => dictionary(field, d, shape, batch, s, e, ctx)
          case _ =>
            val a = varBinary(
              layout.pagePosition(field.id, batch),
              layout.pageLength(field.id, batch),
              s,
              e,
              ctx
            )
            if (v20.V20FileReader.isUtf8(field.logicalType)) {
              val bad = Utf8Validator.firstInvalid(a)
              if (bad >= 0) throw ctx.corrupt(Utf8Validator.describe(a.offsets, 0, a.data, bad))
            }
            if (field.nullable) emptyAsNull(a) else a
        }
      case ValueShape.Fixed(w, bool) =>
        field.logicalType match {
          case d: LogicalType.Dictionary => dictionary(field, d, shape, batch, s, e, ctx)
          case _ if bool => new FixedWidthArray(n, null, 1, bits(field, batch, s, e, ctx))
          case _ => new FixedWidthArray(n, null, w, plainRange(field, batch, s, e, w, ctx))
        }
      case ValueShape.FixedList(dim, item) =>
        val (w, depth) = flatWidth(item, ctx)
        val total = Math.multiplyExact(dim, depth)
        val data = plainRange(field, batch, s, e, Math.multiplyExact(w, total), ctx)
        nestFixedList(n, dim, item, data, w)
    }
  }

  private def child(
      c: LanceField,
      cs: ValueShape,
      batch: Int,
      s: Long,
      e: Long,
      ctx: PageContext
  ): ColumnArray =
    if (!presentIds.contains(c.id) || !layout.hasPage(c.id)) new NullArray((e - s).toInt)
    else decode(
      c,
      cs,
      batch,
      s,
      e,
      PageContext(ctx.file, c.name, c.id, c.id - layout.minFieldId, batch)
    )

  /** Field ids this file holds (set by the reader from DataFile.fields). */
  var presentIds: Set[Int] = Set.empty

  /** Width and element count of one fixed-size-list item (nested fixed-size lists are flattened). */
  private def flatWidth(shape: ValueShape, ctx: PageContext): (Int, Int) = shape match {
    case ValueShape.Fixed(w, false) => (w, 1)
    case ValueShape.FixedList(d, inner) => val (w, k) = flatWidth(inner, ctx); (w, d * k)
    case other => throw io.sparklance.LanceErrors.unsupported(
        s"legacy fixed-size list of $other in ${ctx.file}, field '${ctx.fieldName}' (id ${ctx.fieldId})"
      )
  }

  private def nestFixedList(
      n: Int,
      dim: Int,
      item: ValueShape,
      data: Array[Byte],
      w: Int
  ): ColumnArray = item match {
    case ValueShape.FixedList(d2, inner) =>
      new FixedSizeListArray(n, null, dim, nestFixedList(n * dim, d2, inner, data, w))
    case _ => new FixedSizeListArray(n, null, dim, new FixedWidthArray(n * dim, null, w, data))
  }

  /** Bytes of rows [s, e) of a PLAIN page of `w`-byte values. */
  private def plainRange(
      field: LanceField,
      batch: Int,
      s: Long,
      e: Long,
      w: Int,
      ctx: PageContext
  ): Array[Byte] = {
    val pos = layout.pagePosition(field.id, batch)
    val len = layout.pageLength(field.id, batch)
    ctx.check(s >= 0 && e >= s && e <= len, s"rows [$s, $e) asked of a page of $len values")
    readChecked(pos + s * w, (e - s) * w, ctx)
  }

  private def bits(
      field: LanceField,
      batch: Int,
      s: Long,
      e: Long,
      ctx: PageContext
  ): Array[Byte] = {
    val pos = layout.pagePosition(field.id, batch)
    val len = layout.pageLength(field.id, batch)
    ctx.check(s >= 0 && e >= s && e <= len, s"rows [$s, $e) asked of a page of $len values")
    val n = (e - s).toInt
    if (n == 0) return Array.emptyByteArray
    val first = s / 8
    val bytes = readChecked(pos + first, (e + 7) / 8 - first, ctx)
    val shift = (s % 8).toInt
    val out = new Array[Byte](n)
    var i = 0
    while (i < n) { val b = i + shift; out(i) = ((bytes(b >>> 3) >>> (b & 7)) & 1).toByte; i += 1 }
    out
  }

  /** Rows [s, e) of a VAR_BINARY page at `pos` holding `len` values. */
  private def varBinary(
      pos: Long,
      len: Long,
      s: Long,
      e: Long,
      ctx: PageContext
  ): VarBinaryArray = {
    ctx.check(s >= 0 && e >= s && e <= len, s"rows [$s, $e) asked of a page of $len values")
    val n = (e - s).toInt
    val raw = readChecked(pos + s * 8, (n + 1).toLong * 8, ctx)
    val positions = new Array[Long](n + 1)
    ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(positions)
    val start = positions(0)
    val offsets = new Array[Int](n + 1)
    var i = 0
    while (i <= n) {
      val o = positions(i) - start
      if (o < 0 || o > Int.MaxValue - 16 || (i > 0 && positions(i) < positions(i - 1)))
        throw ctx.corrupt(s"string position ${positions(i)} of row ${s + i} is out of order")
      offsets(i) = o.toInt
      i += 1
    }
    val data = readChecked(start, positions(n) - start, ctx)
    new VarBinaryArray(n, null, offsets, data)
  }

  private def emptyAsNull(a: VarBinaryArray): VarBinaryArray = {
    var nulls: Array[Boolean] = null
    var i = 0
    while (i < a.length) {
      if (a.offsets(i + 1) == a.offsets(i)) {
        if (nulls == null) nulls = new Array[Boolean](a.length)
        nulls(i) = true
      }
      i += 1
    }
    if (nulls == null) a else new VarBinaryArray(a.length, nulls, a.offsets, a.data)
  }

  private def dictionary(
      field: LanceField,
      d: LogicalType.Dictionary,
      shape: ValueShape,
      batch: Int,
      s: Long,
      e: Long,
      ctx: PageContext
  ): ColumnArray = {
    val keyWidth = ValueShape.ofType(d.index, field) match {
      case ValueShape.Fixed(w, false) => w
      case other => throw ctx.corrupt(s"dictionary index type ${d.index.text} is not an integer")
    }
    val values = dictionaries.getOrElseUpdate(field.id, loadDictionary(field, shape, ctx))
    val n = (e - s).toInt
    val raw = plainRange(field, batch, s, e, keyWidth, ctx)
    val bb = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN)
    val idx = new Array[Int](n)
    var i = 0
    while (i < n) {
      val k: Long = keyWidth match {
        case 1 => raw(i).toLong
        case 2 => bb.getShort(i * 2).toLong
        case 4 => bb.getInt(i * 4).toLong
        case 8 => bb.getLong(i * 8)
      }
      ctx.check(
        k >= 0 && k < values.length,
        s"dictionary key $k of row ${s + i} is outside the ${values.length}-value dictionary"
      )
      idx(i) = k.toInt
      i += 1
    }
    ColumnArrays.take(values, idx)
  }

  private def loadDictionary(
      field: LanceField,
      shape: ValueShape,
      ctx: PageContext
  ): ColumnArray = {
    val own = layout.ownFields.getOrElse(
      field.id,
      throw ctx.corrupt("dictionary field is missing from the file's own schema")
    )
    ctx.check(own.hasDictionary, "dictionary field has no dictionary values")
    val pos = own.getDictionary.getOffset
    val len = own.getDictionary.getLength
    ctx.check(pos >= 0 && len >= 0 && len < Int.MaxValue, s"dictionary at ($pos, $len) is invalid")
    shape match {
      // Read like any VAR_BINARY page: an empty value of a nullable field is null.
      case ValueShape.Var =>
        val v = varBinary(pos, len, 0, len, ctx); if (field.nullable) emptyAsNull(v) else v
      case ValueShape.Fixed(w, false) =>
        new FixedWidthArray(len.toInt, null, w, readChecked(pos, len * w, ctx))
      case other => throw ctx.corrupt(s"dictionary values of shape $other")
    }
  }

  private def readChecked(pos: Long, len: Long, ctx: PageContext): Array[Byte] = {
    ctx.check(
      pos >= 0 && len >= 0 && pos + len <= layout.fileSize && len <= Int.MaxValue - 16,
      s"page bytes at ($pos, $len) lie outside the file (size ${layout.fileSize})"
    )
    if (len == 0) Array.emptyByteArray else input.read(pos, len.toInt)
  }
}
