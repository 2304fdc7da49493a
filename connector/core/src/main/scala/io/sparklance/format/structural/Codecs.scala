package io.sparklance.format.structural

import io.sparklance.format.codec.{FastLanes, Fsst, GeneralCompression, LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos.{CompressiveEncoding => CE, _}
import io.sparklance.proto.EncodingsV21Protos.CompressiveEncoding.CompressionCase

import scala.jdk.CollectionConverters._

/**
 * The decoders of the `CompressiveEncoding` tree, one class per encoding and per position it
 * can take: inside mini-block chunks ([[MiniBlockCodec]]), over a whole buffer such as levels
 * or a dictionary ([[BlockCodec]]), and per value in full-zip pages ([[FixedPerValueCodec]],
 * [[VarPerValueCodec]]). The tree is matched once per page when the codec is built; decoding
 * then runs array loops only.
 */
private[structural] abstract class MiniBlockCodec {
  def numBuffers: Int
  def decode(bufs: Array[Slice], n: Int): Values
}

private[structural] abstract class BlockCodec {

  /** False for codecs whose values live in the encoding itself (constant, range). */
  def needsPayload: Boolean = true

  /** Decodes `n` values from the whole buffer. */
  def decode(buf: Slice, n: Int): Values
}

private[structural] abstract class FixedPerValueCodec {
  def bytesPerValue: Int

  /** `n` values laid out contiguously, `bytesPerValue` each, starting at `buf.off`. */
  def decode(buf: Slice, n: Int): Values
}

private[structural] abstract class VarPerValueCodec {
  def decode(raw: VarValues): Values
}

private[structural] object Codecs {
  private def need(ref: PageRef, cond: Boolean, why: => String): Unit =
    if (!cond) throw ref.corrupt(why)

  // ------------------------------------------------------------------ mini-block codecs
  def miniBlock(e: CE, ref: PageRef): MiniBlockCodec = e.getCompressionCase match {
    case CompressionCase.FLAT =>
      val f = e.getFlat
      need(ref, !f.hasData, "a mini-block Flat encoding cannot carry buffer compression")
      new FlatMini(bitsOf(f.getBitsPerValue, ref), ref)
    case CompressionCase.INLINE_BITPACKING =>
      new InlineBitpackMini(wordBits(e.getInlineBitpacking.getUncompressedBitsPerValue, ref), ref)
    case CompressionCase.VARIABLE => variableMini(e.getVariable, ref)
    case CompressionCase.FSST =>
      val f = e.getFsst
      val inner = miniBlock(f.getValues, ref)
      new FsstMini(Fsst.parseTable(f.getSymbolTable.toByteArray, ref.toString), inner, ref)
    case CompressionCase.RLE =>
      val (vb, lb, vc, lc) = rleParts(e.getRle, ref)
      new RleMini(vb, lb, vc, lc, ref)
    case CompressionCase.FIXED_SIZE_LIST => new FslMini(fslLayers(e.getFixedSizeList, ref), ref)
    case CompressionCase.BYTE_STREAM_SPLIT =>
      val v = e.getByteStreamSplit.getValues
      need(
        ref,
        v.hasFlat && (v.getFlat.getBitsPerValue == 32 || v.getFlat.getBitsPerValue == 64),
        "ByteStreamSplit needs 32 or 64-bit Flat values"
      )
      new BssMini(v.getFlat.getBitsPerValue.toInt / 8, ref)
    case CompressionCase.GENERAL =>
      val g = e.getGeneral
      new GeneralMini(scheme(g.getCompression, ref), miniBlock(g.getValues, ref), ref)
    case CompressionCase.PACKED_STRUCT =>
      val p = e.getPackedStruct
      val bits = p.getBitsPerValueList.asScala.map(_.toLong).toArray
      need(
        ref,
        bits.forall(b => b > 0 && b % 8 == 0),
        s"packed struct field widths ${bits.mkString(",")} are not whole bytes"
      )
      val total = bits.sum
      need(
        ref,
        p.getValues.hasFlat && p.getValues.getFlat.getBitsPerValue == total,
        "packed struct values must be Flat of the summed field widths"
      )
      new PackedStructMini(bits.map(b => (b / 8).toInt), ref)
    case other => throw ref.unsupported(s"compression $other inside mini-block chunks")
  }

  private def bitsOf(b: Long, ref: PageRef): Int = {
    need(
      ref,
      b == 1 || (b > 0 && b % 8 == 0 && b <= 8 * 1024 * 1024),
      s"Flat width $b bits is not supported"
    )
    b.toInt
  }
  private def wordBits(b: Long, ref: PageRef): Int = {
    need(
      ref,
      b == 8 || b == 16 || b == 32 || b == 64,
      s"bitpacking word of $b bits (must be 8, 16, 32 or 64)"
    )
    b.toInt
  }
  private def scheme(c: BufferCompression, ref: PageRef): Int = c.getSchemeValue match {
    case 1 => GeneralCompression.Lz4
    case 2 => GeneralCompression.Zstd
    case other => throw ref.unsupported(s"general compression scheme $other")
  }

  private def variableMini(v: Variable, ref: PageRef): MiniBlockCodec = {
    need(ref, !v.hasValues, "mini-block Variable values cannot carry buffer compression")
    val o = v.getOffsets
    if (o.hasFlat) {
      val b = o.getFlat.getBitsPerValue
      need(
        ref,
        (b == 32 || b == 64) && !o.getFlat.hasData,
        s"mini-block Variable offsets of $b bits"
      )
      new VariableMini(b.toInt / 8, ref)
    } else {
      // Newer writers may compress the offsets with a block codec (bitpacking, ...): the chunk
      // then holds [offsets payload, bytes] and offsets start at 0.
      new GenericVariableMini(block(o, ref), ref)
    }
  }

  /**
   * Flattened FSL description: dims (outermost first), which layers have item validity, and
   * the item Flat width. `itemBits` 0 means the items are all null and store no bytes: the
   * writer encodes an FSL whose items are all null in a page as `Constant(None)` items, each
   * row keeping only its validity bytes.
   */
  final case class FslDesc(dims: Array[Int], validity: Array[Boolean], itemBits: Int) {
    def allNullItems: Boolean = itemBits == 0
  }

  private def fslLayers(f0: FixedSizeList, ref: PageRef): FslDesc = {
    val dims = scala.collection.mutable.ArrayBuffer[Int]()
    val vals = scala.collection.mutable.ArrayBuffer[Boolean]()
    var f = f0
    while (true) {
      need(
        ref,
        f.getItemsPerValue > 0 && f.getItemsPerValue < (1 << 24),
        s"fixed-size list dimension ${f.getItemsPerValue}"
      )
      dims += f.getItemsPerValue.toInt; vals += f.getHasValidity
      val v = f.getValues
      if (v.hasFixedSizeList) f = v.getFixedSizeList
      else if (v.hasConstant) {
        need(ref, !v.getConstant.hasValue, "fixed-size list items encoded as a non-null constant")
        return FslDesc(dims.toArray, vals.toArray, 0)
      } else if (v.hasFlat) {
        need(ref, !v.getFlat.hasData, "fixed-size list items cannot carry buffer compression")
        return FslDesc(dims.toArray, vals.toArray, bitsOf(v.getFlat.getBitsPerValue, ref))
      } else throw ref.unsupported(s"fixed-size list items encoded as ${v.getCompressionCase}")
    }
    throw new IllegalStateException
  }

  private def rleParts(r: Rle, ref: PageRef): (Int, Int, BlockCodec, BlockCodec) = {
    def childBits(c: CE): (Int, BlockCodec) = c.getCompressionCase match {
      case CompressionCase.FLAT => (c.getFlat.getBitsPerValue.toInt, null)
      case CompressionCase.OUT_OF_LINE_BITPACKING =>
        (c.getOutOfLineBitpacking.getUncompressedBitsPerValue.toInt, block(c, ref))
      case CompressionCase.GENERAL =>
        val inner = c.getGeneral.getValues
        val b = if (inner.hasFlat) inner.getFlat.getBitsPerValue.toInt
        else if (inner.hasOutOfLineBitpacking)
          inner.getOutOfLineBitpacking.getUncompressedBitsPerValue.toInt
        else throw ref.unsupported(s"RLE child ${inner.getCompressionCase} under General")
        (b, block(c, ref))
      case other => throw ref.unsupported(s"RLE child encoding $other")
    }
    val (vb, vc) = childBits(r.getValues)
    val (lb, lc) = childBits(r.getRunLengths)
    need(ref, vb == 8 || vb == 16 || vb == 32 || vb == 64, s"RLE values of $vb bits")
    need(ref, lb == 8 || lb == 16 || lb == 32, s"RLE run lengths of $lb bits")
    (vb / 8, lb / 8, vc, lc)
  }

  // ------------------------------------------------------------------ block codecs
  def block(e: CE, ref: PageRef): BlockCodec = e.getCompressionCase match {
    case CompressionCase.FLAT =>
      val f = e.getFlat
      val inner = new FlatBlock(bitsOf(f.getBitsPerValue, ref), ref)
      if (f.hasData) new GeneralBlock(scheme(f.getData, ref), inner, ref) else inner
    case CompressionCase.INLINE_BITPACKING =>
      new InlineBitpackBlock(wordBits(e.getInlineBitpacking.getUncompressedBitsPerValue, ref), ref)
    case CompressionCase.OUT_OF_LINE_BITPACKING =>
      val o = e.getOutOfLineBitpacking
      need(ref, o.getValues.hasFlat, "out-of-line bitpacking values must be Flat")
      val s = wordBits(o.getUncompressedBitsPerValue, ref)
      val w = o.getValues.getFlat.getBitsPerValue
      need(ref, w >= 0 && w <= s, s"out-of-line bitpacking width $w exceeds $s bits")
      new OutOfLineBitpackBlock(s, w.toInt, ref)
    case CompressionCase.VARIABLE => new VariableBlock(ref)
    case CompressionCase.GENERAL =>
      val g = e.getGeneral
      new GeneralBlock(scheme(g.getCompression, ref), block(g.getValues, ref), ref)
    case CompressionCase.RLE =>
      val (vb, lb, vc, lc) = rleParts(e.getRle, ref)
      new RleBlock(vb, lb, vc, lc, ref)
    case CompressionCase.FIXED_SIZE_LIST => new FslBlock(fslLayers(e.getFixedSizeList, ref), ref)
    case CompressionCase.CONSTANT =>
      val c = e.getConstant
      new ConstantBlock(if (c.hasValue) c.getValue.toByteArray else null)
    case CompressionCase.RANGE =>
      val r = e.getRange
      new RangeBlock(wordBits(r.getUncompressedBitsPerValue, ref) / 8, r.getStart, r.getStep)
    case CompressionCase.DELTA =>
      val d = e.getDelta
      new DeltaBlock(
        wordBits(d.getUncompressedBitsPerValue, ref) / 8,
        d.getBase,
        block(d.getDeltas, ref),
        ref
      )
    case other => throw ref.unsupported(s"compression $other as a block encoding")
  }

  // ------------------------------------------------------------------ per-value codecs
  def fixedPerValue(e: CE, ref: PageRef): FixedPerValueCodec = e.getCompressionCase match {
    case CompressionCase.FLAT =>
      val b = bitsOf(e.getFlat.getBitsPerValue, ref)
      need(ref, b % 8 == 0, s"full-zip Flat of $b bits")
      need(ref, !e.getFlat.hasData, "full-zip Flat values cannot carry buffer compression")
      new FixedPerValueCodec {
        def bytesPerValue: Int = b / 8
        def decode(buf: Slice, n: Int): Values = new FixedValues(n, b / 8, buf.a, buf.off)
      }
    case CompressionCase.FIXED_SIZE_LIST => new FslPerValue(fslLayers(e.getFixedSizeList, ref), ref)
    case CompressionCase.PACKED_STRUCT =>
      val bits = e.getPackedStruct.getBitsPerValueList.asScala.map(_.toLong).toArray
      need(
        ref,
        bits.forall(b => b > 0 && b % 8 == 0),
        "packed struct field widths are not whole bytes"
      )
      val codec = new PackedStructMini(bits.map(b => (b / 8).toInt), ref)
      new FixedPerValueCodec {
        def bytesPerValue: Int = (bits.sum / 8).toInt
        def decode(buf: Slice, n: Int): Values =
          codec.decode(Array(buf.sub(0, n * bytesPerValue)), n)
      }
    case other => throw ref.unsupported(s"compression $other for fixed-width full-zip values")
  }

  def varPerValue(e: CE, ref: PageRef): VarPerValueCodec = e.getCompressionCase match {
    case CompressionCase.VARIABLE =>
      new VarPerValueCodec { def decode(raw: VarValues): Values = raw }
    case CompressionCase.FSST =>
      val table = Fsst.parseTable(e.getFsst.getSymbolTable.toByteArray, ref.toString)
      new VarPerValueCodec {
        def decode(raw: VarValues): Values = {
          val (o, d) =
            Fsst.decompress(table, raw.data, raw.offsets, raw.offOff, raw.count, ref.toString)
          new VarValues(raw.count, o, 0, d)
        }
      }
    case CompressionCase.GENERAL =>
      val s = scheme(e.getGeneral.getCompression, ref)
      new GeneralPerValue(s, ref)
    case CompressionCase.VARIABLE_PACKED_STRUCT =>
      new VariablePackedStructPerValue(e.getVariablePackedStruct, ref)
    case other => throw ref.unsupported(s"compression $other for variable-width full-zip values")
  }

  // ------------------------------------------------------------------ helpers shared by codecs
  /** Unpacks an LSB-first bitmap to one byte (0/1) per value. */
  def bitsToBytes(a: Array[Byte], off: Int, n: Int): Array[Byte] = {
    val out = new Array[Byte](n); var i = 0
    while (i < n) { out(i) = ((a(off + (i >>> 3)) >>> (i & 7)) & 1).toByte; i += 1 }
    out
  }
  def bitsToNulls(a: Array[Byte], off: Int, n: Int): Array[Boolean] = {
    val out = new Array[Boolean](n); var i = 0
    while (i < n) { out(i) = ((a(off + (i >>> 3)) >>> (i & 7)) & 1) == 0; i += 1 }
    out
  }

  /** Reads `n` fixed values of `width` bytes as ints (indices); widths 1..8, unsigned. */
  def toIndices(v: Values, ref: PageRef): Array[Int] = v match {
    case f: FixedValues =>
      val out = new Array[Int](f.count); var i = 0
      f.width match {
        case 1 => while (i < f.count) { out(i) = f.data(f.off + i) & 0xff; i += 1 }
        case 2 => while (i < f.count) { out(i) = LE.u16(f.data, f.off + 2 * i); i += 1 }
        case 4 => while (i < f.count) { out(i) = LE.i32(f.data, f.off + 4 * i); i += 1 }
        case 8 => while (i < f.count) { out(i) = LE.i64(f.data, f.off + 8 * i).toInt; i += 1 }
        case w => throw ref.corrupt(s"indices of $w bytes")
      }
      out
    case c: ConstantValues if c.scalar != null =>
      val k = toIndices(c.scalar, ref); Array.fill(c.count)(k(0))
    case other =>
      throw ref.corrupt(s"expected fixed-width integers, decoded ${other.getClass.getSimpleName}")
  }

  /** Levels (u16) from a decoded block. */
  def toLevels(v: Values, n: Int, ref: PageRef): Array[Short] = v match {
    case f: FixedValues if f.width == 2 =>
      need(
        ref,
        f.count >= n && f.off + 2L * n <= f.data.length,
        s"level buffer holds ${f.count} levels, expected $n"
      )
      val out = new Array[Short](n); var i = 0
      while (i < n) { out(i) = LE.u16(f.data, f.off + 2 * i).toShort; i += 1 }
      out
    case c: ConstantValues if c.scalar != null => Array.fill(n)(toLevels(c.scalar, 1, ref)(0))
    case other =>
      throw ref.corrupt(s"levels must decode to 16-bit values, got ${other.getClass.getSimpleName}")
  }

  /** Offsets (32 or 64-bit fixed values) as longs. */
  def toLongOffsets(v: Values, n: Int, ref: PageRef): Array[Long] = v match {
    case f: FixedValues if (f.width == 4 || f.width == 8) && f.count >= n =>
      val out = new Array[Long](n); var i = 0
      if (f.width == 4) while (i < n) { out(i) = LE.u32(f.data, f.off + 4 * i); i += 1 }
      else while (i < n) { out(i) = LE.i64(f.data, f.off + 8 * i); i += 1 }
      out
    case other => throw ref.corrupt(s"offsets decoded as ${other.getClass.getSimpleName}")
  }

  /** The bytes of `n`-ish fixed values of width `w` as a slice. */
  def fixedSlice(v: Values, w: Int, ref: PageRef): Slice = v match {
    case f: FixedValues if f.width == w => new Slice(f.data, f.off, f.count * w)
    case c: ConstantValues if c.scalar != null =>
      val s = fixedSlice(c.scalar, w, ref); val out = new Array[Byte](c.count * w); var i = 0
      while (i < c.count) { System.arraycopy(s.a, s.off, out, i * w, w); i += 1 }
      Slice.of(out)
    case other =>
      throw ref.corrupt(s"expected $w-byte values, decoded ${other.getClass.getSimpleName}")
  }

  /** Wraps flattened items into nested fixed-size lists, outermost dimension first. */
  def nestFsl(d: FslDesc, n: Int, nulls: Array[Array[Boolean]], items: Values): Values = {
    val counts = new Array[Int](d.dims.length)
    var c = n; var k = 0
    while (k < d.dims.length) { counts(k) = c; c *= d.dims(k); k += 1 }
    var v = items
    k = d.dims.length - 1
    while (k >= 0) { v = new FslValues(counts(k), d.dims(k), nulls(k), v); k -= 1 }
    v
  }
}
