package io.sparklance.format.v20

import io.sparklance.format._
import io.sparklance.proto.EncodingsV20Protos.{ArrayEncoding, Buffer, Nullable}
import io.sparklance.proto.EncodingsV20Protos.ArrayEncoding.ArrayEncodingCase

/**
 * Decodes one whole 2.0 page of a leaf column: walks the page's `ArrayEncoding` tree once,
 * choosing the loop for each node, and returns the page's `n` values in the field's shape.
 *
 * `oneBasedDictionary`: a plain string field that the writer chose to dictionary-encode
 * stores 1-based u8 indices with 0 = null; a field whose logical type is itself a dictionary
 * keeps Arrow's 0-based indices.
 *
 * `keepStringDictionary`: a dictionary page of strings or binary decodes to a
 * [[DictionaryArray]] (ids plus the page's entries) instead of gathered bytes; only for
 * top-level columns, whose arrays the Spark layer can hand over as dictionary vectors.
 */
final class ArrayDecoder(
    ctx: PageContext,
    bufs: PageBuffers,
    oneBasedDictionary: Boolean,
    val keepStringDictionary: Boolean = false
) {

  def decode(enc: ArrayEncoding, n: Int, shape: ValueShape): ColumnArray = ctx.guard {
    enc.getArrayEncodingCase match {
      case ArrayEncodingCase.NULLABLE => nullable(enc.getNullable, n, shape)
      case ArrayEncodingCase.FLAT => flat(enc, n, shape)
      case ArrayEncodingCase.FIXED_SIZE_LIST =>
        val fsl = enc.getFixedSizeList
        shape match {
          case ValueShape.FixedList(dim, item) =>
            ctx.check(
              fsl.getDimension == dim,
              s"FixedSizeList dimension ${fsl.getDimension} but the field has $dim"
            )
            val child = decode(fsl.getItems, Math.multiplyExact(n, dim), item)
            new FixedSizeListArray(n, null, dim, child)
          case other => throw ctx.corrupt(s"FixedSizeList encoding for a field of shape $other")
        }
      case ArrayEncodingCase.BINARY => BinaryDecoder.decode(enc.getBinary, n, shape, this, ctx)
      case ArrayEncodingCase.DICTIONARY =>
        DictionaryDecoder.decode(enc.getDictionary, n, shape, oneBasedDictionary, this, ctx)
      case ArrayEncodingCase.FSST => BinaryDecoder.fsst(enc.getFsst, n, shape, this, ctx)
      case ArrayEncodingCase.CONSTANT => constant(enc.getConstant.getValue.toByteArray, n, shape)
      case ArrayEncodingCase.FIXED_SIZE_BINARY =>
        val fsb = enc.getFixedSizeBinary
        val w = fsb.getByteWidth
        val bytes = decode(
          fsb.getBytes,
          Math.multiplyExact(n, w),
          ValueShape.Fixed(1, bool = false)
        ).asInstanceOf[FixedWidthArray]
        shape match {
          case ValueShape.Fixed(bw, _) =>
            ctx.check(bw == w, s"FixedSizeBinary of $w bytes for a $bw-byte field")
            new FixedWidthArray(n, null, w, bytes.data)
          case ValueShape.Var =>
            val offsets = new Array[Int](n + 1)
            var i = 0
            while (i < n) { offsets(i + 1) = offsets(i) + w; i += 1 }
            new VarBinaryArray(n, null, offsets, bytes.data)
          case other => throw ctx.corrupt(s"FixedSizeBinary encoding for a field of shape $other")
        }
      case ArrayEncodingCase.PACKED_STRUCT =>
        throw ctx.corrupt("PackedStruct outside a struct column")
      case other =>
        throw io.sparklance.LanceErrors.unsupported(
          s"Lance 2.0 encoding $other is not supported (file ${ctx.file}, field '${ctx.fieldName}' id ${ctx.fieldId}, column ${ctx.column}, page ${ctx.page})"
        )
    }
  }

  /**
   * Rows `[from, until)` of a page of `n` rows, reading only the bytes they need, for the
   * encodings where that is possible without decoding the rest (uncompressed Flat values,
   * Flat validity, dictionary indices, binary offsets and bytes); null for any other
   * encoding, which the caller then decodes whole.
   */
  def decodeWindow(
      enc: ArrayEncoding,
      n: Int,
      from: Int,
      until: Int,
      shape: ValueShape
  ): ColumnArray = ctx.guard {
    ctx.check(
      from >= 0 && from <= until && until <= n,
      s"row window [$from, $until) outside a page of $n rows"
    )
    enc.getArrayEncodingCase match {
      case ArrayEncodingCase.NULLABLE =>
        val nb = enc.getNullable
        nb.getNullabilityCase match {
          case Nullable.NullabilityCase.NO_NULLS =>
            decodeWindow(nb.getNoNulls.getValues, n, from, until, shape)
          case Nullable.NullabilityCase.ALL_NULLS => ColumnArrays.allNull(shape, until - from)
          case Nullable.NullabilityCase.SOME_NULLS =>
            val sn = nb.getSomeNulls
            val validity = sn.getValidity
            if (validity.getArrayEncodingCase != ArrayEncodingCase.FLAT) null
            else {
              val bitmap = FlatDecoder.window(validity.getFlat, n, from, until, 0, bufs, ctx)
              if (bitmap == null) null
              else {
                val values = decodeWindow(sn.getValues, n, from, until, shape)
                if (values == null) null
                else {
                  val k = until - from
                  val nulls = new Array[Boolean](k)
                  var any = false
                  var i = 0; val shift = from & 7
                  while (i < k) {
                    val j = i + shift
                    val isNull = ((bitmap(j >>> 3) >>> (j & 7)) & 1) == 0
                    nulls(i) = isNull; any |= isNull; i += 1
                  }
                  if (!any) values
                  else ColumnArrays.withNulls(values, mergeNulls(values.nulls, nulls))
                }
              }
            }
          case _ => null
        }
      case ArrayEncodingCase.FLAT =>
        shape match {
          case ValueShape.Fixed(w, bool) if !(bool && enc.getFlat.getBitsPerValue == 1) =>
            val data = FlatDecoder.window(enc.getFlat, n, from, until, w, bufs, ctx)
            if (data == null) null else new FixedWidthArray(until - from, null, w, data)
          case ValueShape.FixedList(dim, ValueShape.Fixed(w, false))
              if enc.getFlat.getBitsPerValue == 8L * w * dim =>
            // A vector stored as one wide value per row: its bytes are the items' bytes.
            val data =
              FlatDecoder.window(enc.getFlat, n, from, until, Math.multiplyExact(w, dim), bufs, ctx)
            if (data == null) null
            else new FixedSizeListArray(
              until - from,
              null,
              dim,
              new FixedWidthArray(Math.multiplyExact(until - from, dim), null, w, data)
            )
          case _ => null
        }
      case ArrayEncodingCase.FIXED_SIZE_LIST =>
        val fsl = enc.getFixedSizeList
        shape match {
          case ValueShape.FixedList(dim, item) =>
            ctx.check(
              fsl.getDimension == dim,
              s"FixedSizeList dimension ${fsl.getDimension} but the field has $dim"
            )
            val items = decodeWindow(
              fsl.getItems,
              Math.multiplyExact(n, dim),
              from * dim,
              Math.multiplyExact(until, dim),
              item
            )
            if (items == null) null else new FixedSizeListArray(until - from, null, dim, items)
          case _ => null
        }
      case ArrayEncodingCase.DICTIONARY =>
        DictionaryDecoder.decodeWindow(
          enc.getDictionary,
          n,
          from,
          until,
          shape,
          oneBasedDictionary,
          this,
          ctx
        )
      case ArrayEncodingCase.BINARY =>
        BinaryDecoder.decodeWindow(enc.getBinary, n, from, until, shape, this, ctx)
      case _ => null
    }
  }

  private def nullable(nb: Nullable, n: Int, shape: ValueShape): ColumnArray =
    nb.getNullabilityCase match {
      case Nullable.NullabilityCase.NO_NULLS => decode(nb.getNoNulls.getValues, n, shape)
      case Nullable.NullabilityCase.ALL_NULLS => ColumnArrays.allNull(shape, n)
      case Nullable.NullabilityCase.SOME_NULLS =>
        val sn = nb.getSomeNulls
        val validity = sn.getValidity
        ctx.check(
          validity.getArrayEncodingCase == ArrayEncodingCase.FLAT,
          s"validity encoded as ${validity.getArrayEncodingCase}, expected Flat"
        )
        val nulls = FlatDecoder.nullsFromValidity(validity.getFlat, n, bufs, ctx)
        val values = decode(sn.getValues, n, shape)
        if (nulls == null) values
        else ColumnArrays.withNulls(values, mergeNulls(values.nulls, nulls))
      case other => throw ctx.corrupt(s"Nullable encoding without a nullability ($other)")
    }

  private def mergeNulls(a: Array[Boolean], b: Array[Boolean]): Array[Boolean] = {
    if (a == null) return b
    var i = 0
    while (i < b.length) { b(i) |= a(i); i += 1 }
    b
  }

  private def flat(enc: ArrayEncoding, n: Int, shape: ValueShape): ColumnArray = {
    val f = enc.getFlat
    shape match {
      case ValueShape.Fixed(w, bool) => FlatDecoder.fixed(f, n, w, bool, bufs, ctx)
      case ValueShape.FixedList(dim, ValueShape.Fixed(w, false))
          if f.getBitsPerValue == 8L * w * dim =>
        // A vector stored as one wide value per row.
        val child = FlatDecoder.fixed(
          f.toBuilder.setBitsPerValue(8L * w).build(),
          Math.multiplyExact(n, dim),
          w,
          bool = false,
          bufs,
          ctx
        )
        new FixedSizeListArray(n, null, dim, child)
      case other => throw ctx.corrupt(s"Flat encoding for a field of shape $other")
    }
  }

  /** Lance's 2.0 Constant carries the raw value bytes of the single repeated value. */
  private def constant(value: Array[Byte], n: Int, shape: ValueShape): ColumnArray = shape match {
    case ValueShape.Fixed(w, bool) =>
      val v = if (bool && value.length == 1 && w == 1) Array[Byte]((value(0) & 1).toByte) else value
      ctx.check(v.length == w, s"Constant value of ${v.length} bytes for a $w-byte field")
      val data = new Array[Byte](Math.multiplyExact(n, w))
      if (w == 1) java.util.Arrays.fill(data, v(0))
      else { var i = 0; while (i < n) { System.arraycopy(v, 0, data, i * w, w); i += 1 } }
      new FixedWidthArray(n, null, w, data)
    case ValueShape.Var =>
      val len = value.length
      val data = new Array[Byte](Math.multiplyExact(n, len))
      val offsets = new Array[Int](n + 1)
      var i = 0
      while (i < n) {
        System.arraycopy(value, 0, data, i * len, len); offsets(i + 1) = (i + 1) * len; i += 1
      }
      new VarBinaryArray(n, null, offsets, data)
    case other => throw ctx.corrupt(s"Constant encoding for a field of shape $other")
  }

  /** Bits per value of the innermost Flat under (possibly nested) Nullable wrappers; 0 if none. */
  def innerFlatBits(enc: ArrayEncoding): Long = enc.getArrayEncodingCase match {
    case ArrayEncodingCase.FLAT => enc.getFlat.getBitsPerValue
    case ArrayEncodingCase.NULLABLE =>
      val nb = enc.getNullable
      nb.getNullabilityCase match {
        case Nullable.NullabilityCase.NO_NULLS => innerFlatBits(nb.getNoNulls.getValues)
        case Nullable.NullabilityCase.SOME_NULLS => innerFlatBits(nb.getSomeNulls.getValues)
        case _ => 0L
      }
    case _ => 0L
  }

  /** Values `[from, until)` of `unsignedLongs`, reading only their bytes; null when the encoding does not allow it. */
  def unsignedLongsWindow(
      enc: ArrayEncoding,
      n: Int,
      from: Int,
      until: Int,
      what: String
  ): (Array[Long], Array[Boolean]) = {
    val bits = innerFlatBits(enc)
    ctx.check(
      bits == 8 || bits == 16 || bits == 32 || bits == 64,
      s"$what stored with $bits bits per value"
    )
    val w = (bits / 8).toInt
    decodeWindow(enc, n, from, until, ValueShape.Fixed(w, bool = false)) match {
      case null => null
      case f: FixedWidthArray => (toUnsignedLongs(f.data, until - from, w), f.nulls)
      case other => throw ctx.corrupt(s"$what decoded as ${other.getClass.getSimpleName}")
    }
  }

  /** `n` unsigned integer values (indices, offsets) as longs, with their null flags. */
  def unsignedLongs(enc: ArrayEncoding, n: Int, what: String): (Array[Long], Array[Boolean]) = {
    val bits = innerFlatBits(enc)
    ctx.check(
      bits == 8 || bits == 16 || bits == 32 || bits == 64,
      s"$what stored with $bits bits per value"
    )
    val w = (bits / 8).toInt
    val arr = decode(enc, n, ValueShape.Fixed(w, bool = false)) match {
      case f: FixedWidthArray => f
      case other => throw ctx.corrupt(s"$what decoded as ${other.getClass.getSimpleName}")
    }
    (toUnsignedLongs(arr.data, n, w), arr.nulls)
  }

  private def toUnsignedLongs(d: Array[Byte], n: Int, w: Int): Array[Long] = {
    val out = new Array[Long](n)
    w match {
      case 1 => var i = 0; while (i < n) { out(i) = d(i) & 0xffL; i += 1 }
      case 2 =>
        val bb = java.nio.ByteBuffer.wrap(d).order(java.nio.ByteOrder.LITTLE_ENDIAN).asShortBuffer()
        var i = 0; while (i < n) { out(i) = bb.get(i) & 0xffffL; i += 1 }
      case 4 =>
        val bb = java.nio.ByteBuffer.wrap(d).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer()
        var i = 0; while (i < n) { out(i) = bb.get(i) & 0xffffffffL; i += 1 }
      case 8 =>
        java.nio.ByteBuffer.wrap(d).order(java.nio.ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(
          out,
          0,
          n
        )
    }
    out
  }
}

object ArrayDecoder {

  /**
   * Whether [[decodeWindow]] reads exactly a window's bytes and nothing else for `enc`: a tree
   * of uncompressed page-buffer Flats under Nullable and FixedSizeList nodes. (Dictionary and
   * binary windows work too, but decode a dictionary or read offsets on every call.)
   */
  def windowReadsOnlyWindow(enc: ArrayEncoding): Boolean = enc.getArrayEncodingCase match {
    case ArrayEncodingCase.FLAT =>
      val f = enc.getFlat
      f.hasBuffer && f.getBuffer.getBufferType == Buffer.BufferType.page &&
      !(f.hasCompression && f.getCompression.getScheme.nonEmpty && f.getCompression.getScheme != "none")
    case ArrayEncodingCase.FIXED_SIZE_LIST => windowReadsOnlyWindow(enc.getFixedSizeList.getItems)
    case ArrayEncodingCase.NULLABLE =>
      val nb = enc.getNullable
      nb.getNullabilityCase match {
        case Nullable.NullabilityCase.NO_NULLS => windowReadsOnlyWindow(nb.getNoNulls.getValues)
        case Nullable.NullabilityCase.ALL_NULLS => true
        case Nullable.NullabilityCase.SOME_NULLS =>
          windowReadsOnlyWindow(nb.getSomeNulls.getValidity) && windowReadsOnlyWindow(
            nb.getSomeNulls.getValues
          )
        case _ => false
      }
    case _ => false
  }
}
