package io.sparklance.format.v20

import io.sparklance.format._
import io.sparklance.proto.EncodingsV20Protos.ArrayEncoding.ArrayEncodingCase

/**
 * 2.0 `PackedStruct{inner, buffer}` (opt-in via `lance-encoding:packed`; also the descriptors
 * of blob v1 columns): a struct of fixed-width children stored row by row, each row the
 * children's values back to back, the child widths given by the `inner` Flat encodings. The
 * whole struct is one column.
 */
object PackedStructDecoder {

  /**
   * `childPositions(i)` is the position, among all the struct's children in the file, of the
   * i-th requested child of `shape`.
   */
  def decode(
      enc: io.sparklance.proto.EncodingsV20Protos.ArrayEncoding,
      n: Int,
      shape: ValueShape.Struct,
      childPositions: Array[Int],
      bufs: PageBuffers,
      ctx: PageContext
  ): ColumnArray = ctx.guard {
    ctx.check(
      enc.getArrayEncodingCase == ArrayEncodingCase.PACKED_STRUCT,
      s"struct column page is encoded as ${enc.getArrayEncodingCase}, expected PackedStruct"
    )
    val ps = enc.getPackedStruct
    val widths = Array.tabulate(ps.getInnerCount) { i =>
      // Children are plain Flat, or (blob descriptors, whose children are non-nullable fields)
      // Flat wrapped in Nullable{no_nulls}: the wrapper carries no buffer of its own.
      var inner = ps.getInner(i)
      if (inner.getArrayEncodingCase == ArrayEncodingCase.NULLABLE && inner.getNullable.hasNoNulls)
        inner = inner.getNullable.getNoNulls.getValues
      ctx.check(
        inner.getArrayEncodingCase == ArrayEncodingCase.FLAT,
        s"packed child $i is encoded as ${inner.getArrayEncodingCase}"
      )
      val bits = inner.getFlat.getBitsPerValue
      ctx.check(bits > 0 && bits % 8 == 0, s"packed child $i has $bits bits per value")
      (bits / 8).toInt
    }
    val starts = widths.scanLeft(0)(_ + _)
    val stride = starts.last
    val data = bufs.get(ps.getBuffer)
    ctx.check(
      data.length.toLong >= n.toLong * stride,
      s"packed struct buffer holds ${data.length} bytes, $n rows of $stride need ${n.toLong * stride}"
    )
    val children = shape.children.zipWithIndex.map { case ((field, childShape), i) =>
      val pos = childPositions(i)
      if (pos < 0) new NullArray(n)
      else {
        ctx.check(
          pos < widths.length,
          s"packed struct has ${widths.length} children, child '${field.name}' is number $pos"
        )
        val w = widths(pos)
        childShape match {
          case ValueShape.Fixed(bw, _) if bw == w =>
            val out = new Array[Byte](Math.multiplyExact(n, w))
            val off = starts(pos)
            var r = 0
            while (r < n) { System.arraycopy(data, r * stride + off, out, r * w, w); r += 1 }
            new FixedWidthArray(n, null, w, out)
          case other =>
            throw ctx.corrupt(s"packed child '${field.name}' of $w bytes does not fit shape $other")
        }
      }
    }
    new StructArray(n, null, children.toArray)
  }
}
