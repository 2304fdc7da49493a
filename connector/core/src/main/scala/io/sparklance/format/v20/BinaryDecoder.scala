package io.sparklance.format.v20

import io.sparklance.format._
import io.sparklance.format.codec.Fsst
import io.sparklance.proto.EncodingsV20Protos.{Binary, Fsst => FsstEncoding}

/**
 * 2.0 `Binary{indices, bytes, null_adjustment}`: `indices` are u64 *end* offsets without the
 * leading 0; a null row stores its (unchanged) end plus `null_adjustment`, so any value at or
 * above it is null. `bytes` is a Flat 8 buffer of the concatenated values.
 */
object BinaryDecoder {

  def decode(
      b: Binary,
      n: Int,
      shape: ValueShape,
      dec: ArrayDecoder,
      ctx: PageContext
  ): ColumnArray = {
    val (ends, indexNulls) = dec.unsignedLongs(b.getIndices, n, "binary offsets")
    val nullAdj = b.getNullAdjustment
    val offsets = new Array[Int](n + 1)
    var nulls: Array[Boolean] = null
    var prev = 0L
    var i = 0
    while (i < n) {
      var end = ends(i)
      // Unsigned compare: null_adjustment is total_bytes + 1, far below 2^63 in practice.
      if (nullAdj > 0 && java.lang.Long.compareUnsigned(end, nullAdj) >= 0) {
        end -= nullAdj
        if (nulls == null) nulls = new Array[Boolean](n)
        nulls(i) = true
      }
      if (end < prev || end > Int.MaxValue - 16)
        throw ctx.corrupt(
          s"binary offset $end of row $i is out of order (previous end $prev) or too large"
        )
      offsets(i + 1) = end.toInt
      prev = end
      i += 1
    }
    if (indexNulls != null) {
      if (nulls == null) nulls = indexNulls
      else { var k = 0; while (k < n) { nulls(k) |= indexNulls(k); k += 1 } }
    }
    val total = offsets(n)
    val data = dec.decode(b.getBytes, total, ValueShape.Fixed(1, bool = false)) match {
      case f: FixedWidthArray => f.data
      case other => throw ctx.corrupt(s"binary bytes decoded as ${other.getClass.getSimpleName}")
    }
    toShape(new VarBinaryArray(n, nulls, offsets, data), shape, ctx)
  }

  /** Rows `[from, until)` of a page of `n` rows, reading only their offsets and bytes; null when the encoding does not allow it. */
  def decodeWindow(
      b: Binary,
      n: Int,
      from: Int,
      until: Int,
      shape: ValueShape,
      dec: ArrayDecoder,
      ctx: PageContext
  ): ColumnArray = {
    val lo = if (from == 0) 0 else from - 1
    dec.unsignedLongsWindow(b.getIndices, n, lo, until, "binary offsets") match {
      case null => null
      case (ends, indexNulls0) =>
        val nullAdj = b.getNullAdjustment
        def unadjusted(v: Long): Long =
          if (nullAdj > 0 && java.lang.Long.compareUnsigned(v, nullAdj) >= 0) v - nullAdj else v
        val k = until - from
        val skip = from - lo
        val first = if (skip == 0) 0L else unadjusted(ends(0))
        if (first < 0 || first > Int.MaxValue - 16)
          throw ctx.corrupt(s"binary offset $first of row ${from - 1} is out of range")
        val offsets = new Array[Int](k + 1)
        var nulls: Array[Boolean] = null
        var prev = first
        var i = 0
        while (i < k) {
          var end = ends(i + skip)
          if (nullAdj > 0 && java.lang.Long.compareUnsigned(end, nullAdj) >= 0) {
            end -= nullAdj
            if (nulls == null) nulls = new Array[Boolean](k)
            nulls(i) = true
          }
          if (end < prev || end > Int.MaxValue - 16)
            throw ctx.corrupt(
              s"binary offset $end of row ${from + i} is out of order (previous end $prev) or too large"
            )
          offsets(i + 1) = (end - first).toInt
          prev = end
          i += 1
        }
        if (indexNulls0 != null) {
          if (nulls == null) nulls = new Array[Boolean](k)
          var j = 0; while (j < k) { nulls(j) |= indexNulls0(j + skip); j += 1 }
        }
        val data =
          if (prev == first) Array.emptyByteArray
          else dec.decodeWindow(
            b.getBytes,
            prev.toInt,
            first.toInt,
            prev.toInt,
            ValueShape.Fixed(1, bool = false)
          ) match {
            case null => return null
            case f: FixedWidthArray => f.data
            case other =>
              throw ctx.corrupt(s"binary bytes decoded as ${other.getClass.getSimpleName}")
          }
        toShape(new VarBinaryArray(k, nulls, offsets, data), shape, ctx)
    }
  }

  /** 2.0 `Fsst{binary, symbol_table}`: FSST codes stored as Binary, decompressed per value. */
  def fsst(
      f: FsstEncoding,
      n: Int,
      shape: ValueShape,
      dec: ArrayDecoder,
      ctx: PageContext
  ): ColumnArray = {
    val codes = dec.decode(f.getBinary, n, ValueShape.Var) match {
      case v: VarBinaryArray => v
      case other => throw ctx.corrupt(s"FSST codes decoded as ${other.getClass.getSimpleName}")
    }
    val (offsets, data) =
      Fsst.decompress(f.getSymbolTable.toByteArray, codes.data, codes.offsets, n)
    ctx.check(offsets.length == n + 1, s"FSST returned ${offsets.length - 1} values, expected $n")
    toShape(new VarBinaryArray(n, codes.nulls, offsets, data), shape, ctx)
  }

  /** Variable-width values for a fixed-size binary field must all have its width. */
  private def toShape(a: VarBinaryArray, shape: ValueShape, ctx: PageContext): ColumnArray =
    shape match {
      case ValueShape.Var => a
      case ValueShape.Fixed(w, false) =>
        val out = new Array[Byte](Math.multiplyExact(a.length, w))
        var i = 0
        while (i < a.length) {
          val s = a.offsets(i); val len = a.offsets(i + 1) - s
          if (len == w) System.arraycopy(a.data, s, out, i * w, w)
          else if (!(a.nulls != null && a.nulls(i) && len == 0))
            throw ctx.corrupt(s"value $i has $len bytes but the field holds $w-byte values")
          i += 1
        }
        new FixedWidthArray(a.length, a.nulls, w, out)
      case other => throw ctx.corrupt(s"binary encoding for a field of shape $other")
    }
}
