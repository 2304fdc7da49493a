package io.sparklance.format.writer

import io.sparklance.format._
import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos.{CompressiveEncoding, VariablePackedStruct}

/**
 * Packed structs with string or binary children (2.2's `VariablePackedStruct`), as pylance
 * 14.0.2 writes them: a full-zip page whose values are rows, row i being each child's value in
 * field order, a fixed-width child as its little-endian bytes and a variable-width one as its
 * length (4 bytes, 8 for large strings and binaries) and bytes. A null struct has no row.
 *
 * Each variable child is compressed per value as pylance compresses a string page of its own
 * ([[ValueCompressors.fullZip]]: FSST for text whose page is large enough, zstd per value for
 * very long values, else plain), decided per page over that child's values; the row then
 * holds the compressed value and its compressed length. `widths` are
 * [[PackedStructs.childWidths]]: a fixed width, or minus a variable child's length bytes.
 */
private[writer] object VariablePackedRows {

  /** Struct batch `a` as plain rows, empty where the struct is null. */
  def pack(f: LanceField, widths: Array[Int], a: ColumnArray): VarBinaryArray = a match {
    case s: StructArray =>
      val n = s.length
      val out = new ByteBuf(1024)
      val offsets = new Array[Int](n + 1)
      var i = 0
      while (i < n) {
        if (!s.isNull(i)) {
          var c = 0
          while (c < widths.length) {
            appendChild(f, c, widths(c), s.children(c), i, out)
            c += 1
          }
        }
        offsets(i + 1) = out.size
        i += 1
      }
      new VarBinaryArray(n, s.nulls, offsets, java.util.Arrays.copyOf(out.array, out.size))
    case n: NullArray =>
      new VarBinaryArray(n.length, n.nulls, new Array[Int](n.length + 1), Array.emptyByteArray)
    case other => throw new IllegalArgumentException(
        s"field '${f.name}' is a struct but got ${other.getClass.getSimpleName}"
      )
  }

  private def appendChild(
      f: LanceField,
      c: Int,
      w: Int,
      child: ColumnArray,
      row: Int,
      out: ByteBuf
  ): Unit = child match {
    case x if x.isNull(row) => throw PackedStructs.nullChild(f, c, row)
    case fx: FixedWidthArray if w > 0 && fx.byteWidth == w => out.bytes(fx.data, row * w, w)
    case v: VarBinaryArray if w < 0 =>
      val st = v.offsets(row)
      val len = v.offsets(row + 1) - st
      if (w == -8) out.u64(len.toLong) else out.u32(len.toLong)
      out.bytes(v.data, st, len)
    case other => throw new IllegalArgumentException(s"field '${f.name}': child $c does not " +
        s"hold ${if (w > 0) s"$w-byte" else "variable-width"} values " +
        s"(${other.getClass.getSimpleName})")
  }

  /**
   * The page's rows (`rows`, as [[pack]] built them, nulls empty) with each variable child
   * compressed as pylance would, and the page's `VariablePackedStruct` encoding.
   */
  def payload(
      f: LanceField,
      widths: Array[Int],
      rows: VarValuesBuf,
      params: LanceField => EncodingParams,
      scratch: PageScratch
  ): FullZipEncoder.VarPayload = {
    val n = rows.count
    val ro = rows.offsets.array
    val rd = rows.data.array
    // Each variable child's values, split out of the rows (an empty row: a null struct,
    // whose children get an empty value so that they stay aligned with the rows).
    val childOffsets = widths.map(w => if (w < 0) new Array[Int](n + 1) else null)
    val childData = widths.map(w => if (w < 0) new ByteBuf(1024) else null)
    var i = 0
    while (i < n) {
      var p = ro(i)
      val valid = p < ro(i + 1)
      var c = 0
      while (c < widths.length) {
        val w = widths(c)
        if (valid && w > 0) p += w
        else if (w < 0) {
          if (valid) {
            val len = LE.uint(rd, p, -w).toInt
            p -= w
            childData(c).bytes(rd, p, len)
            p += len
          }
          childOffsets(c)(i + 1) = childData(c).size
        }
        c += 1
      }
      i += 1
    }
    val children: Array[VarValuesBuf] = widths.indices.map { c =>
      if (widths(c) > 0) null
      else {
        val b = new VarValuesBuf(widths(c) == -8)
        b.append(new VarBinaryArray(n, null, childOffsets(c), childData(c).array), null, n)
        b
      }
    }.toArray
    val compressed = widths.indices.map { c =>
      if (widths(c) > 0) null
      else ValueCompressors.fullZip(
        children(c),
        f.children(c).logicalType,
        params(f.children(c)),
        scratch
      )
    }.toArray
    val encoding = VariablePackedStruct.newBuilder()
    widths.indices.foreach { c =>
      val w = widths(c)
      val fe = VariablePackedStruct.FieldEncoding.newBuilder()
      if (w > 0) fe.setValue(Encodings.flat(w * 8)).setBitsPerValue(w * 8L)
      else fe.setValue(if (compressed(c) != null) compressed(c).encoding
      else Encodings.variable(-w * 8)).setBitsPerLength(-w * 8L)
      encoding.addFields(fe)
    }
    val enc = CompressiveEncoding.newBuilder().setVariablePackedStruct(encoding).build()
    if (compressed.forall(_ == null)) return new FullZipEncoder.VarPayload(ro, rd, enc)
    // Rows again, each variable child's value replaced by its compressed form.
    val out = new ByteBuf(rows.data.size + 64)
    val offsets = new Array[Int](n + 1)
    val k = new Array[Int](widths.length)
    i = 0
    while (i < n) {
      var p = ro(i)
      if (p < ro(i + 1)) {
        var c = 0
        while (c < widths.length) {
          val w = widths(c)
          if (w > 0) { out.bytes(rd, p, w); p += w }
          else {
            val len = LE.uint(rd, p, -w).toInt
            p += -w + len
            val (vo, vd) = compressed(c) match {
              case null => (children(c).offsets.array, children(c).data.array)
              case z => (z.offsets, z.data)
            }
            val st = vo(k(c))
            val clen = vo(k(c) + 1) - st
            if (w == -8) out.u64(clen.toLong) else out.u32(clen.toLong)
            out.bytes(vd, st, clen)
          }
          c += 1
        }
      }
      var c = 0
      while (c < widths.length) { if (widths(c) < 0) k(c) += 1; c += 1 }
      offsets(i + 1) = out.size
      i += 1
    }
    new FullZipEncoder.VarPayload(offsets, out.array, enc)
  }
}
