package io.sparklance.format.writer

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.proto.EncodingsV20Protos._

/**
 * Writes the columns of one field of a 2.0 file, as the standard Lance writer lays them out:
 * every field of the tree has a column, pre-order. A struct is a column of empty
 * `SimpleStruct` pages (2.0 cannot store a null struct); a list is a column of `List` pages
 * (u64 end offsets per page, no leading 0, a null list adding `null_offset_adjustment`)
 * followed by its item's columns; leaves are `Nullable(Flat)`, `Binary` or
 * `Nullable(FixedSizeList(Nullable(Flat)))` pages.
 */
private[writer] abstract class V20ColumnWriter {
  def append(a: ColumnArray): Unit
  def finish(): Unit
}

private[writer] object V20ColumnWriter {
  def columnsOf(f: LanceField): Int = PackedStructs.columnFields(f).size
  def numColumns(fields: Seq[LanceField]): Int = fields.map(columnsOf).sum

  def apply(f: LanceField, col: Int, c: ContainerWriter, budget: Long): V20ColumnWriter =
    f.logicalType match {
      case _ if io.sparklance.format.blob.BlobColumn.isBlob(f) =>
        if (
          io.sparklance.format.blob.BlobColumn.version(f).contains(
            io.sparklance.format.blob.BlobColumn.V2
          )
        )
          throw LanceErrors.unsupported(
            s"Column '${f.name}': blob v2 (lance.blob.v2) columns need data_storage_version 2.2 or later"
          )
        new V20BlobWriter(f, col, c, budget)
      case LogicalType.Struct if PackedStructs.isPacked(f) =>
        new V20PackedStructWriter(f, col, c, budget)
      case LogicalType.Struct =>
        var next = col + 1
        val kids = f.children.map { k =>
          val w = apply(k, next, c, budget); next += columnsOf(k); w
        }
        new V20StructWriter(f, col, c, kids.toArray)
      case LogicalType.List | LogicalType.LargeList | _: LogicalType.ListOfStruct =>
        new V20ListWriter(f, col, c, apply(f.children.head, col + 1, c, budget), budget)
      case LogicalType.Map =>
        throw LanceErrors.unsupported(
          s"Column '${f.name}': maps need data_storage_version 2.2 (Lance 2.0 cannot store them)"
        )
      case _ => new V20LeafWriter(f, col, c, budget)
    }

  def buffer(i: Int): Buffer =
    Buffer.newBuilder().setBufferIndex(i).setBufferType(Buffer.BufferType.page).build()
  def flat(bits: Int, buf: Int): ArrayEncoding =
    ArrayEncoding.newBuilder().setFlat(
      Flat.newBuilder().setBitsPerValue(bits.toLong).setBuffer(buffer(buf))
    ).build()
  def noNulls(values: ArrayEncoding): ArrayEncoding =
    ArrayEncoding.newBuilder().setNullable(
      Nullable.newBuilder().setNoNulls(Nullable.NoNull.newBuilder().setValues(values))
    ).build()
  def someNulls(validity: ArrayEncoding, values: ArrayEncoding): ArrayEncoding =
    ArrayEncoding.newBuilder().setNullable(Nullable.newBuilder().setSomeNulls(
      Nullable.SomeNull.newBuilder().setValidity(validity).setValues(values)
    )).build()
  val allNulls: ArrayEncoding =
    ArrayEncoding.newBuilder().setNullable(
      Nullable.newBuilder().setAllNulls(Nullable.AllNull.newBuilder())
    ).build()

  /** Items `[offsets(0), offsets(n))` of a list batch, minus those hidden under null lists. */
  def listItems(l: ListArray): (Array[Int], ColumnArray) = {
    val n = l.length
    val lens = Array.tabulate(n)(i => if (l.isNull(i)) 0 else l.offsets(i + 1) - l.offsets(i))
    val hidden = (0 until n).exists(i => l.isNull(i) && l.offsets(i + 1) != l.offsets(i))
    val child =
      if (!hidden) {
        if (l.offsets(0) == 0 && l.offsets(n) == l.child.length) l.child
        else ColumnArrays.slice(l.child, l.offsets(0), l.offsets(n) - l.offsets(0))
      } else {
        val idx =
          (0 until n).filterNot(l.isNull).flatMap(i => l.offsets(i) until l.offsets(i + 1)).toArray
        ColumnArrays.take(l.child, idx)
      }
    (lens, child)
  }
}

private[writer] final class V20StructWriter(
    f: LanceField,
    col: Int,
    c: ContainerWriter,
    kids: Array[V20ColumnWriter]
) extends V20ColumnWriter {
  private var rows = 0L
  def append(a: ColumnArray): Unit = a match {
    case s: StructArray =>
      if (s.hasNulls && s.nulls.exists(identity))
        throw LanceErrors.unsupported(
          s"Column '${f.name}' holds null structs, which Lance file version 2.0 cannot store; write with data_storage_version 2.1 or later"
        )
      var i = 0
      while (i < kids.length) { kids(i).append(s.children(i)); i += 1 }
      rows += s.length
    case n: NullArray if n.length == 0 =>
    case other => throw new IllegalArgumentException(
        s"field '${f.name}' is a struct but got ${other.getClass.getSimpleName}"
      )
  }
  def finish(): Unit = {
    kids.foreach(_.finish())
    c.addEmptyPage(
      col,
      rows,
      0,
      ArrayEncoding.newBuilder().setStruct(SimpleStruct.newBuilder()).build()
    )
  }
}

private[writer] final class V20ListWriter(
    f: LanceField,
    col: Int,
    c: ContainerWriter,
    items: V20ColumnWriter,
    budget: Long
) extends V20ColumnWriter {
  private val lens = new IntBuf(1024)
  private val nulls = new ByteBuf(1024)
  private var firstRow = 0L
  def append(a: ColumnArray): Unit = a match {
    case l: ListArray =>
      val (ls, child) = V20ColumnWriter.listItems(l)
      var i = 0
      while (i < l.length) { lens.add(ls(i)); nulls.u8(if (l.isNull(i)) 1 else 0); i += 1 }
      items.append(child)
      if (8L * lens.size >= budget) flush()
    case other => throw new IllegalArgumentException(
        s"field '${f.name}' is a list but got ${other.getClass.getSimpleName}"
      )
  }
  private def flush(): Unit = {
    val n = lens.size
    if (n == 0) return
    var total = 0L
    var i = 0
    while (i < n) { total += lens(i); i += 1 }
    val adj = total + 1
    val b = new ByteBuf(8 * n)
    var end = 0L
    i = 0
    while (i < n) { end += lens(i); b.u64(if (nulls.array(i) != 0) end + adj else end); i += 1 }
    val enc = ArrayEncoding.newBuilder().setList(
      io.sparklance.proto.EncodingsV20Protos.List.newBuilder()
        .setOffsets(V20ColumnWriter.noNulls(V20ColumnWriter.flat(64, 0)))
        .setNullOffsetAdjustment(adj)
        .setNumItems(total)
    ).build()
    c.addPage(col, Seq(b), n, firstRow, enc)
    firstRow += n
    lens.clear(); nulls.clear()
  }
  def finish(): Unit = { flush(); items.finish() }
}

private[writer] final class V20LeafWriter(f: LanceField, col: Int, c: ContainerWriter, budget: Long)
    extends V20ColumnWriter {
  private val params = EncodingParams.of(f, f)
  private val values = LeafValues.forShape(ValueShape.ofType(f.logicalType, f), f.name)
  private val nulls = new ByteBuf(1024)
  private var nullCount = 0
  private var firstRow = 0L

  /** The field's dictionary type, if it has one: every page then is a dictionary page. */
  private val dict = DeclaredDictionary.of(f)
  dict.foreach(d => DeclaredDictionary.checkValues(f.name, d, values))

  def append(a: ColumnArray): Unit = {
    val n = a.length
    val vis = new Array[Int](n)
    var i = 0
    while (i < n) {
      val isNull = a.isNull(i)
      vis(i) = if (isNull) -1 else i
      nulls.u8(if (isNull) 1 else 0)
      if (isNull) nullCount += 1
      i += 1
    }
    values.append(a, vis, n)
    if (values.bytes + n >= budget) flush()
  }

  private def flush(): Unit = {
    val n = nulls.size
    if (n == 0) return
    if (dict.isDefined) {
      val (bufs, enc) = DeclaredDictionary.v20Page(f.name, dict.get, values, nulls.array, n)
      c.addPage(col, bufs, n, firstRow, enc)
      firstRow += n
      nulls.clear(); nullCount = 0
      values.clear()
      return
    }
    val validity = new ByteBuf(n / 8 + 8)
    if (nullCount > 0 && nullCount < n) {
      val valid = new Array[Byte](n)
      var i = 0
      while (i < n) { valid(i) = (1 - nulls.array(i)).toByte; i += 1 }
      MiniBlockEncoder.bitmap(valid, 0, n, validity)
    }
    if (nullCount == n || values.isInstanceOf[NullValuesBuf])
      c.addEmptyPage(col, n, firstRow, V20ColumnWriter.allNulls)
    else {
      val vi = if (nullCount > 0) 1 else 0 // buffer index of the values
      val (valueBufs, enc) = values match {
        case fx: FixedValuesBuf =>
          val b = new ByteBuf(fx.data.size + 8)
          if (fx.bool) MiniBlockEncoder.bitmap(fx.data.array, 0, n, b)
          else b.bytes(fx.data.array, 0, fx.data.size)
          (Seq(b), V20ColumnWriter.flat(if (fx.bool) 1 else fx.width * 8, vi))
        case l: FslValuesBuf =>
          val b = new ByteBuf(l.data.size + 8)
          if (l.itemBool) MiniBlockEncoder.bitmap(l.data.array, 0, n * l.dim, b)
          else b.bytes(l.data.array, 0, l.data.size)
          val itemBits = if (l.itemBool) 1 else l.itemWidth * 8
          // Null items: a validity bitmap of the items before their values, as pylance writes them.
          val (bufs, items) =
            if (!l.anyItemNull)
              (Seq(b), V20ColumnWriter.noNulls(V20ColumnWriter.flat(itemBits, vi)))
            else {
              val itemValidity = new ByteBuf(n * l.dim / 8 + 8)
              MiniBlockEncoder.bitmap(l.itemValid.array, 0, n * l.dim, itemValidity)
              (
                Seq(itemValidity, b),
                V20ColumnWriter.someNulls(
                  V20ColumnWriter.flat(1, vi),
                  V20ColumnWriter.flat(itemBits, vi + 1)
                )
              )
            }
          (
            bufs,
            ArrayEncoding.newBuilder().setFixedSizeList(
              FixedSizeList.newBuilder().setDimension(l.dim).setHasValidity(false).setItems(items)
            ).build()
          )
        case v: VarValuesBuf =>
          V20Strings.dictionary(f, v, nulls.array, n) match {
            case Some((bufs, enc)) => c.addPage(col, bufs, n, firstRow, enc)
            case None =>
              val (bufs, enc) = V20Strings.binary(v, nulls.array, n, params)
              c.addPage(col, bufs, n, firstRow, enc)
          }
          (null, null)
        case _: NullValuesBuf => LeafValues.noValues
      }
      if (valueBufs != null) {
        if (nullCount > 0) c.addPage(
          col,
          validity +: valueBufs,
          n,
          firstRow,
          V20ColumnWriter.someNulls(V20ColumnWriter.flat(1, 0), enc)
        )
        else c.addPage(col, valueBufs, n, firstRow, V20ColumnWriter.noNulls(enc))
      }
    }
    firstRow += n
    nulls.clear(); nullCount = 0
    values.clear()
  }

  def finish(): Unit = {
    flush()
    // A leaf that never saw a row (the items of lists that are all empty or null) still gets
    // one page, an all-null page of 0 rows, as pylance writes it.
    if (firstRow == 0) c.addEmptyPage(col, 0, 0, V20ColumnWriter.allNulls)
  }
}

/**
 * 2.0 string and binary pages as pylance 14.0.2 writes them: `Binary` (u64 end offsets
 * without the leading 0, a null adding `null_adjustment`; the bytes compressed when
 * `lance-encoding:compression` is zstd or lz4), or for a `string` page of at least 100 rows
 * with fewer than 100 distinct values a `Dictionary` of 1-based u8 indices (0 = null) into
 * `Binary` items.
 */
private[writer] object V20Strings {
  private val Threshold = 100

  def binary(
      v: VarValuesBuf,
      nulls: Array[Byte],
      n: Int,
      params: EncodingParams
  ): (Seq[ByteBuf], ArrayEncoding) = {
    val total = v.data.size.toLong
    val adj = total + 1
    val idxBuf = new ByteBuf(8 * n)
    var i = 0
    while (i < n) {
      val e = v.offsets(i + 1).toLong; idxBuf.u64(if (nulls(i) != 0) e + adj else e); i += 1
    }
    val bytes = new ByteBuf(v.data.size + 8)
    val flat = Flat.newBuilder().setBitsPerValue(8).setBuffer(V20ColumnWriter.buffer(1))
    params.generalScheme match {
      case Some(s) =>
        bytes.bytes(io.sparklance.format.codec.GeneralCompressor.compress(
          s,
          params.level,
          v.data.array,
          0,
          v.data.size
        ))
        val comp = Compression.newBuilder().setScheme(params.compression.get)
        params.compressionLevel.foreach(l => comp.setLevel(l))
        flat.setCompression(comp)
      case None => bytes.bytes(v.data.array, 0, v.data.size)
    }
    val enc = ArrayEncoding.newBuilder().setBinary(Binary.newBuilder()
      .setIndices(V20ColumnWriter.noNulls(V20ColumnWriter.flat(64, 0)))
      .setBytes(ArrayEncoding.newBuilder().setFlat(flat))
      .setNullAdjustment(adj)).build()
    (Seq(idxBuf, bytes), enc)
  }

  def dictionary(
      f: LanceField,
      v: VarValuesBuf,
      nulls: Array[Byte],
      n: Int
  ): Option[(Seq[ByteBuf], ArrayEncoding)] = {
    if (f.logicalType != LogicalType.Utf8 || n < Threshold) return None
    val a = v.data.array
    val map = new ByteSliceMap(a, 256)
    val ends = new ByteBuf(8 * Threshold)
    val items = new ByteBuf(1024)
    val idx = new ByteBuf(n + 8)
    var entries = 0
    var i = 0
    while (i < n) {
      if (nulls(i) != 0) idx.u8(0)
      else {
        val s = v.offsets(i); val len = v.offsets(i + 1) - s
        var e = map.getOrPut(s, len, entries)
        if (e < 0) {
          if (entries + 1 >= Threshold) return None
          e = entries; items.bytes(a, s, len); ends.u64(items.size.toLong); entries += 1
        }
        idx.u8(e + 1)
      }
      i += 1
    }
    val itemsEnc = ArrayEncoding.newBuilder().setBinary(Binary.newBuilder()
      .setIndices(V20ColumnWriter.noNulls(V20ColumnWriter.flat(64, 1)))
      .setBytes(V20ColumnWriter.flat(8, 2))
      .setNullAdjustment(items.size.toLong + 1)).build()
    val enc = ArrayEncoding.newBuilder().setDictionary(Dictionary.newBuilder()
      .setIndices(V20ColumnWriter.noNulls(V20ColumnWriter.flat(8, 0)))
      .setItems(itemsEnc)
      .setNumDictionaryItems(entries)).build()
    Some((Seq(idx, ends, items), enc))
  }
}
