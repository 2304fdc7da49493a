package io.sparklance.format.structural

import io.sparklance.format.codec.{FastLanes, GeneralCompression, LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos

import scala.jdk.CollectionConverters._

/**
 * Fastlanes block unpacking into little-endian bytes of the word width. One instance per codec
 * (codecs belong to one page of one scan, so to one thread): the word buffers are reused from
 * block to block and call to call, so unpacking allocates nothing.
 */
private[structural] final class Bitpack {
  private var inL: Array[Long] = null; private var outL: Array[Long] = null
  private var inI: Array[Int] = null; private var outI: Array[Int] = null

  /**
   * Unpacks one block of width `w` in `s`-bit words at `a(off)` into ints (64-bit words
   * truncated, as dictionary indices are read), keeping its first `count` values at `out(outOff)`.
   */
  def unpackToInts(a: Array[Byte], off: Int, s: Int, w: Int, out: Array[Int], outOff: Int, count: Int): Unit = {
    val wordsPerBlock = FastLanes.wordsPerBlock(s, w)
    if (s == 64) {
      if (inL == null) { inL = new Array[Long](1024); outL = new Array[Long](1024) }
      LE.longsInto(a, off, wordsPerBlock, inL)
      FastLanes.unpack64(inL, 0, w, outL, 0)
      var i = 0
      while (i < count) { out(outOff + i) = outL(i).toInt; i += 1 }
    } else {
      if (inI == null) { inI = new Array[Int](1024); outI = new Array[Int](1024) }
      val direct = count == 1024
      val o = if (direct) out else outI
      val oo = if (direct) outOff else 0
      s match {
        case 32 => LE.intsInto(a, off, wordsPerBlock, inI); FastLanes.unpack32(inI, 0, w, o, oo)
        case 16 => LE.u16sInto(a, off, wordsPerBlock, inI); FastLanes.unpack16(inI, 0, w, o, oo)
        case 8 => LE.u8sInto(a, off, wordsPerBlock, inI); FastLanes.unpack8(inI, 0, w, o, oo)
      }
      if (!direct) System.arraycopy(outI, 0, out, outOff, count)
    }
  }

  /** Unpacks `blocks` consecutive 1024-value blocks of width `w` in `s`-bit words at `a(off)`; returns s/8-byte values. */
  def unpackBlocks(a: Array[Byte], off: Int, s: Int, w: Int, blocks: Int, out: Array[Byte], outOff: Int): Unit = {
    val wordsPerBlock = FastLanes.wordsPerBlock(s, w)
    var b = 0
    if (s == 64) {
      if (inL == null) { inL = new Array[Long](1024); outL = new Array[Long](1024) }
      val in = inL; val o = outL
      while (b < blocks) {
        LE.longsInto(a, off + b * wordsPerBlock * 8, wordsPerBlock, in)
        FastLanes.unpack64(in, 0, w, o, 0); LE.fromLongs(o, 0, 1024, out, outOff + b * 8192); b += 1
      }
    } else {
      if (inI == null) { inI = new Array[Int](1024); outI = new Array[Int](1024) }
      val in = inI; val o = outI
      s match {
        case 32 =>
          while (b < blocks) {
            LE.intsInto(a, off + b * wordsPerBlock * 4, wordsPerBlock, in)
            FastLanes.unpack32(in, 0, w, o, 0); LE.fromInts(o, 0, 1024, out, outOff + b * 4096); b += 1
          }
        case 16 =>
          while (b < blocks) {
            LE.u16sInto(a, off + b * wordsPerBlock * 2, wordsPerBlock, in)
            FastLanes.unpack16(in, 0, w, o, 0); LE.fromIntsAs16(o, 0, 1024, out, outOff + b * 2048); b += 1
          }
        case 8 =>
          while (b < blocks) {
            LE.u8sInto(a, off + b * wordsPerBlock, wordsPerBlock, in)
            FastLanes.unpack8(in, 0, w, o, 0); LE.fromIntsAs8(o, 0, 1024, out, outOff + b * 1024); b += 1
          }
      }
    }
  }
}

// ---------------------------------------------------------------------------- mini-block

private[structural] final class FlatMini(bits: Int, ref: PageRef) extends MiniBlockCodec {
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = FlatMini.decode(bufs(0), n, bits, ref)
}
private[structural] object FlatMini {
  def decode(b: Slice, n: Int, bits: Int, ref: PageRef): Values = {
    val need = (n.toLong * bits + 7) / 8
    ref.check(b.len >= need, s"Flat buffer of ${b.len} bytes holds fewer than $n values of $bits bits")
    if (bits == 1) new FixedValues(n, 1, Codecs.bitsToBytes(b.a, b.off, n), 0)
    else new FixedValues(n, bits / 8, b.a, b.off)
  }
}

/** A chunk of at most 1024 values: [W as one S-bit word][1024*W/S words]. */
private[structural] final class InlineBitpackMini(s: Int, ref: PageRef) extends MiniBlockCodec {
  private val unpacker = new Bitpack
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = InlineBitpackMini.decode(bufs(0), n, s, ref, unpacker)

  /** The chunk's `n` values as ints (dictionary indices), unpacked straight into the int array. */
  def decodeIndices(bufs: Array[Slice], n: Int): Array[Int] = {
    val b = bufs(0)
    val wb = s / 8
    val blocks = (n + 1023) / 1024
    val out = new Array[Int](n)
    var pos = b.off; var blk = 0
    while (blk < blocks) {
      val w = InlineBitpackMini.blockWidth(b, pos, s, ref)
      val bytes = 128 * w
      unpacker.unpackToInts(b.a, pos + wb, s, w, out, blk * 1024, math.min(1024, n - blk * 1024))
      pos += wb + bytes; blk += 1
    }
    out
  }
}
private[structural] object InlineBitpackMini {
  /** The bit width of the 1024-value block at `pos` (its leading word), checked against the
   *  word size `s` and against the bytes left in `b` for the block it announces. */
  def blockWidth(b: Slice, pos: Int, s: Int, ref: PageRef): Int = {
    val wb = s / 8
    if (pos + wb > b.end) throw ref.corrupt(s"bitpacked chunk of ${b.len} bytes has no width word")
    val w = LE.uint(b.a, pos, wb)
    if (w < 0 || w > s) throw ref.corrupt(s"bitpacked chunk width $w exceeds $s bits")
    val bytes = 128 * w.toInt
    if (pos + wb + bytes > b.end) throw ref.corrupt(s"bitpacked chunk of ${b.len} bytes is shorter than its ${bytes}-byte block")
    w.toInt
  }

  def decode(b: Slice, n: Int, s: Int, ref: PageRef, unpacker: Bitpack): Values = {
    val wb = s / 8
    val blocks = (n + 1023) / 1024
    val out = new Array[Byte](math.max(blocks, 1) * 1024 * wb)
    var pos = b.off; var blk = 0
    while (blk < blocks) {
      val w = InlineBitpackMini.blockWidth(b, pos, s, ref)
      val bytes = 128 * w
      unpacker.unpackBlocks(b.a, pos + wb, s, w, 1, out, blk * 1024 * wb)
      pos += wb + bytes; blk += 1
    }
    new FixedValues(n, wb, out, 0)
  }
}

/** Offsets (n+1, 32 or 64 bit) relative to the chunk buffer, then the bytes. */
private[structural] final class VariableMini(ow: Int, ref: PageRef) extends MiniBlockCodec {
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    ref.check(b.len.toLong >= (n + 1L) * ow, s"variable chunk of ${b.len} bytes cannot hold ${n + 1} offsets")
    val offs = new Array[Int](n + 1)
    var i = 0; var prev = -1L
    while (i <= n) {
      val o = if (ow == 4) LE.u32(b.a, b.off + 4 * i) else LE.i64(b.a, b.off + 8 * i)
      if (!(o >= prev && o <= b.len && (i > 0 || o >= (n + 1L) * ow))) throw ref.corrupt(s"variable chunk offset $o at $i is invalid")
      offs(i) = b.off + o.toInt; prev = o; i += 1
    }
    new VarValues(n, offs, 0, b.a)
  }
}

/** Offsets compressed by a block codec (payload in buffer 0 unless the codec has none), bytes after. */
private[structural] final class GenericVariableMini(offsets: BlockCodec, ref: PageRef) extends MiniBlockCodec {
  def numBuffers: Int = if (offsets.needsPayload) 2 else 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val values = bufs(bufs.length - 1)
    val o = offsets.decode(if (offsets.needsPayload) bufs(0) else null, n + 1)
    val raw = Codecs.toLongOffsets(o, n + 1, ref)
    val offs = new Array[Int](n + 1)
    var i = 0; var prev = 0L
    while (i <= n) {
      val x = raw(i)
      if (!(x >= prev && x <= values.len && (i > 0 || x == 0))) throw ref.corrupt(s"variable chunk offset $x at $i is invalid")
      offs(i) = values.off + x.toInt; prev = x; i += 1
    }
    new VarValues(n, offs, 0, values.a)
  }
}

private[structural] final class FsstMini(table: io.sparklance.format.codec.Fsst.Table, inner: MiniBlockCodec, ref: PageRef)
  extends MiniBlockCodec {
  def numBuffers: Int = inner.numBuffers
  def decode(bufs: Array[Slice], n: Int): Values = inner.decode(bufs, n) match {
    case v: VarValues =>
      val (o, d) = io.sparklance.format.codec.Fsst.decompress(table, v.data, v.offsets, v.offOff, n, ref.toString)
      new VarValues(n, o, 0, d)
    case other => throw ref.corrupt(s"FSST codes decoded as ${other.getClass.getSimpleName}")
  }
}

private[structural] object Rle {
  /** Expands runs; `clamp` tolerates a last run longer than needed (mini-block form). */
  def expand(values: Slice, lengths: Slice, vb: Int, lb: Int, vc: BlockCodec, lc: BlockCodec, n: Int,
      clamp: Boolean, ref: PageRef): Values = {
    var vals = values; var lens = lengths
    if (lc != null && vc != null) throw ref.unsupported("RLE with both children compressed")
    if (lc != null) {
      ref.check(values.len % vb == 0, "RLE values are not whole values")
      val d = lc.decode(lengths, values.len / vb); lens = Codecs.fixedSlice(d, lb, ref)
    } else if (vc != null) {
      ref.check(lengths.len % lb == 0, "RLE run lengths are not whole values")
      val d = vc.decode(values, lengths.len / lb); vals = Codecs.fixedSlice(d, vb, ref)
    }
    ref.check(vals.len % vb == 0 && lens.len % lb == 0 && vals.len / vb == lens.len / lb,
      s"RLE buffers disagree: ${vals.len} value bytes, ${lens.len} length bytes")
    val runs = vals.len / vb
    val out = new Array[Byte](n * vb)
    var produced = 0; var r = 0
    while (r < runs && produced < n) {
      val len = LE.uint(lens.a, lens.off + r * lb, lb)
      if (len <= 0) throw ref.corrupt("RLE run of length 0")
      if (len > n - produced && !clamp) throw ref.corrupt(s"RLE runs exceed the $n expected values")
      val k = math.min(len, (n - produced).toLong).toInt
      val src = vals.off + r * vb
      val start = produced * vb
      if (vb == 1) java.util.Arrays.fill(out, start, start + k, vals.a(src))
      else {
        System.arraycopy(vals.a, src, out, start, vb)
        // Doubling copies fill the run in log(k) arraycopy calls.
        var filled = 1
        while (filled < k) { val c = math.min(filled, k - filled); System.arraycopy(out, start, out, start + filled * vb, c * vb); filled += c }
      }
      produced += k; r += 1
    }
    ref.check(produced == n, s"RLE runs decode to $produced values, expected $n")
    new FixedValues(n, vb, out, 0)
  }

  def sumRuns(lengths: Slice, lb: Int): Long = {
    var s = 0L; var i = 0
    while (i + lb <= lengths.len) { s += LE.uint(lengths.a, lengths.off + i, lb); i += lb }
    s
  }
}

private[structural] final class RleMini(vb: Int, lb: Int, vc: BlockCodec, lc: BlockCodec, ref: PageRef) extends MiniBlockCodec {
  def numBuffers = 2
  def decode(bufs: Array[Slice], n: Int): Values =
    if (n == 0) new FixedValues(0, vb, new Array[Byte](0), 0)
    else Rle.expand(bufs(0), bufs(1), vb, lb, vc, lc, n, clamp = true, ref)
}

private[structural] final class FslMini(d: Codecs.FslDesc, ref: PageRef) extends MiniBlockCodec {
  // pylance 14.0.2 sends all-null FSL items to full-zip only (its mini-block FSL encoder has no
  // all-null case), so there is no mini-block layout to follow.
  if (d.allNullItems) throw ref.unsupported("mini-block fixed-size lists with all-null (constant) items")
  def numBuffers: Int = 1 + d.validity.count(identity)
  def decode(bufs: Array[Slice], n: Int): Values = {
    var bi = 0
    val nulls = new Array[Array[Boolean]](d.dims.length)
    var cum = n.toLong
    var k = 0
    while (k < d.dims.length) {
      cum *= d.dims(k)
      ref.check(cum < Int.MaxValue, "fixed-size list too large")
      if (d.validity(k)) {
        val b = bufs(bi); bi += 1
        ref.check(b.len.toLong * 8 >= cum, s"fixed-size list validity of ${b.len} bytes for $cum items")
        nulls(k) = Codecs.bitsToNulls(b.a, b.off, cum.toInt)
      }
      k += 1
    }
    val items = FlatMini.decode(bufs(bi), cum.toInt, d.itemBits, ref)
    Codecs.nestFsl(d, n, nulls, items)
  }
}

/** Byte k of value i is stored at k*n + i. */
private[structural] final class BssMini(w: Int, ref: PageRef) extends MiniBlockCodec {
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    ref.check(b.len.toLong >= n.toLong * w, s"byte-stream-split buffer of ${b.len} bytes for $n values")
    val out = new Array[Byte](n * w)
    var k = 0
    while (k < w) {
      var i = 0; val src = b.off + k * n
      while (i < n) { out(i * w + k) = b.a(src + i); i += 1 }
      k += 1
    }
    new FixedValues(n, w, out, 0)
  }
}

/** General compression of buffer 0 of each chunk. */
private[structural] final class GeneralMini(scheme: Int, inner: MiniBlockCodec, ref: PageRef) extends MiniBlockCodec {
  def numBuffers: Int = inner.numBuffers
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    val d = GeneralCompression.decompress(scheme, b.a, b.off, b.len, ref.toString)
    val copy = bufs.clone(); copy(0) = Slice.of(d)
    inner.decode(copy, n)
  }
}

/** Rows of fixed-width fields packed one after the other. */
private[structural] final class PackedStructMini(widths: Array[Int], ref: PageRef) extends MiniBlockCodec {
  private val row = widths.sum
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    ref.check(b.len.toLong >= n.toLong * row, s"packed struct buffer of ${b.len} bytes for $n rows of $row bytes")
    var fieldOff = 0
    val children = widths.map { w =>
      val out = new Array[Byte](n * w)
      var i = 0; var src = b.off + fieldOff
      while (i < n) { System.arraycopy(b.a, src, out, i * w, w); src += row; i += 1 }
      fieldOff += w
      new FixedValues(n, w, out, 0): Values
    }
    new StructValues(n, children)
  }
}

// ---------------------------------------------------------------------------- block

private[structural] final class FlatBlock(bits: Int, ref: PageRef) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = FlatMini.decode(buf, n, bits, ref)
}

private[structural] final class InlineBitpackBlock(s: Int, ref: PageRef) extends BlockCodec {
  private val unpacker = new Bitpack
  def decode(buf: Slice, n: Int): Values =
    if (n == 0) new FixedValues(0, s / 8, new Array[Byte](0), 0) else InlineBitpackMini.decode(buf, n, s, ref, unpacker)
}

/** Whole blocks of 1024 at one width; the tail is either raw values or one padded block. */
private[structural] final class OutOfLineBitpackBlock(s: Int, w: Int, ref: PageRef) extends BlockCodec {
  private val unpacker = new Bitpack
  def decode(buf: Slice, n: Int): Values = {
    val wb = s / 8
    val full = n / 1024; val tail = n % 1024
    val perBlock = 128L * w
    val raw = full * perBlock + tail.toLong * wb
    val padded = full * perBlock + (if (tail > 0) perBlock else 0)
    ref.check(buf.len == raw || buf.len == padded, s"bitpacked buffer of ${buf.len} bytes for $n values of $w bits (expected $raw or $padded)")
    val blocks = if (buf.len == padded) (n + 1023) / 1024 else full
    val out = new Array[Byte](math.max(blocks * 1024, n) * wb)
    unpacker.unpackBlocks(buf.a, buf.off, s, w, blocks, out, 0)
    if (blocks == full && tail > 0) System.arraycopy(buf.a, buf.off + (full * perBlock).toInt, out, full * 1024 * wb, tail * wb)
    new FixedValues(n, wb, out, 0)
  }
}

/** `[u32 32 | u32 bytes_start]` or `[u64 64 | u64 bytes_start]`, then n+1 offsets, then bytes (or the older 1-byte-width header). */
private[structural] final class VariableBlock(ref: PageRef) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = {
    val a = buf.a; val o = buf.off
    ref.check(buf.len >= 4, s"variable block of ${buf.len} bytes has no header")
    val old = a(o + 1) != 0 || a(o + 2) != 0 || a(o + 3) != 0
    val (bits, bytesStart, offStart) =
      if (old) {
        val b = a(o) & 0xFF
        if (b == 32) { ref.check(buf.len >= 9, "short variable block header"); (32, LE.u32(a, o + 5), 9L) }
        else if (b == 64) { ref.check(buf.len >= 17, "short variable block header"); (64, LE.i64(a, o + 9), 17L) }
        else throw ref.corrupt(s"variable block with $b-bit offsets")
      } else {
        val b = LE.i32(a, o)
        if (b == 32) { ref.check(buf.len >= 8, "short variable block header"); (32, LE.u32(a, o + 4), 8L) }
        else if (b == 64) { ref.check(buf.len >= 16, "short variable block header"); (64, LE.i64(a, o + 8), 16L) }
        else throw ref.corrupt(s"variable block with $b-bit offsets")
      }
    val ow = bits / 8
    ref.check(bytesStart >= offStart && bytesStart <= buf.len && bytesStart - offStart == (n + 1L) * ow,
      s"variable block offsets region [$offStart, $bytesStart) does not hold ${n + 1} offsets")
    val offs = new Array[Int](n + 1)
    val dataLen = buf.len - bytesStart
    var i = 0; var prev = 0L
    while (i <= n) {
      val x = if (ow == 4) LE.u32(a, o + offStart.toInt + 4 * i) else LE.i64(a, o + offStart.toInt + 8 * i)
      if (!(x >= prev && x <= dataLen && (i > 0 || x == 0))) throw ref.corrupt(s"variable block offset $x at $i is invalid")
      offs(i) = o + bytesStart.toInt + x.toInt; prev = x; i += 1
    }
    new VarValues(n, offs, 0, a)
  }
}

private[structural] final class GeneralBlock(scheme: Int, inner: BlockCodec, ref: PageRef) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values =
    inner.decode(Slice.of(GeneralCompression.decompress(scheme, buf.a, buf.off, buf.len, ref.toString)), n)
}

/** `u64 values_bytes | values | run lengths`. */
private[structural] final class RleBlock(vb: Int, lb: Int, vc: BlockCodec, lc: BlockCodec, ref: PageRef) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = {
    if (n == 0) return new FixedValues(0, vb, new Array[Byte](0), 0)
    val (v, l) = RleBlock.split(buf, ref)
    Rle.expand(v, l, vb, lb, vc, lc, n, clamp = false, ref)
  }
  /** The level count the runs encode, when it can be read without decoding children. */
  def countValues(buf: Slice): Option[Long] =
    if (vc != null || lc != null) None else { val (_, l) = RleBlock.split(buf, ref); Some(Rle.sumRuns(l, lb)) }
}
private[structural] object RleBlock {
  def split(buf: Slice, ref: PageRef): (Slice, Slice) = {
    ref.check(buf.len >= 8, s"RLE block of ${buf.len} bytes has no header")
    val vs = LE.i64(buf.a, buf.off)
    ref.check(vs >= 0 && vs <= buf.len - 8, s"RLE block declares $vs value bytes in ${buf.len}")
    (buf.sub(8, vs.toInt), buf.sub(8 + vs.toInt, buf.len - 8 - vs.toInt))
  }
}

private[structural] final class FslBlock(d: Codecs.FslDesc, ref: PageRef) extends BlockCodec {
  private val pv = new FslPerValue(d, ref)
  def decode(buf: Slice, n: Int): Values = {
    ref.check(buf.len.toLong >= n.toLong * pv.bytesPerValue, s"fixed-size list block of ${buf.len} bytes for $n values")
    pv.decode(buf, n)
  }
}

private[structural] final class ConstantBlock(value: Array[Byte]) extends BlockCodec {
  override def needsPayload = false
  def decode(buf: Slice, n: Int): Values =
    new ConstantValues(n, if (value == null) null else new FixedValues(1, value.length, value, 0))
}

private[structural] final class RangeBlock(w: Int, start: Long, step: Long) extends BlockCodec {
  override def needsPayload = false
  def decode(buf: Slice, n: Int): Values = {
    val out = new Array[Byte](n * w); var i = 0
    while (i < n) {
      val v = start + step * i
      w match { case 8 => LE.putI64(out, 8 * i, v); case 4 => LE.putI32(out, 4 * i, v.toInt); case 2 => LE.putI16(out, 2 * i, v.toShort); case _ => out(i) = v.toByte }
      i += 1
    }
    new FixedValues(n, w, out, 0)
  }
}

private[structural] final class DeltaBlock(w: Int, base: Long, deltas: BlockCodec, ref: PageRef) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = {
    val out = new Array[Byte](n * w)
    if (n == 0) return new FixedValues(0, w, out, 0)
    val d = Codecs.fixedSlice(deltas.decode(buf, n - 1), w, ref)
    var v = base; var i = 0
    while (i < n) {
      if (i > 0) v += LE.uint(d.a, d.off + (i - 1) * w, w)
      w match { case 8 => LE.putI64(out, 8 * i, v); case 4 => LE.putI32(out, 4 * i, v.toInt); case 2 => LE.putI16(out, 2 * i, v.toShort); case _ => out(i) = v.toByte }
      i += 1
    }
    new FixedValues(n, w, out, 0)
  }
}

// ---------------------------------------------------------------------------- per value

/** Each value: a validity bitmap per nullable FSL layer (ceil(items/8) bytes), then the item bytes. */
private[structural] final class FslPerValue(d: Codecs.FslDesc, ref: PageRef) extends FixedPerValueCodec {
  private val cumDims: Array[Int] = d.dims.scanLeft(1)(_ * _).tail
  private val total = cumDims.last
  private val validityBytes = d.validity.indices.filter(d.validity).map(k => (cumDims(k) + 7) / 8).sum
  ref.check(d.itemBits % 8 == 0 || validityBytes == 0, "nullable fixed-size list of bit-packed items")
  private val dataBytes = if (d.itemBits % 8 == 0) total * (d.itemBits / 8) else (total * d.itemBits + 7) / 8
  val bytesPerValue: Int = validityBytes + dataBytes
  ref.check(bytesPerValue > 0, "fixed-size list values of 0 bytes")
  def decode(buf: Slice, n: Int): Values = {
    if (d.allNullItems) {
      // Only validity bytes are stored; whatever they say, every item is null (pylance reads
      // them as an all-null child). The outer layers' validity still comes from the bytes.
      val nulls = readValidity(buf, n)
      val last = d.dims.length - 1
      val itemNulls = new Array[Boolean](n * total); java.util.Arrays.fill(itemNulls, true)
      nulls(last) = itemNulls
      return Codecs.nestFsl(d, n, nulls, new ConstantValues(n * total, null))
    }
    if (validityBytes == 0) {
      val items = FlatMini.decode(buf, n * total, d.itemBits, ref)
      return Codecs.nestFsl(d, n, new Array[Array[Boolean]](d.dims.length), items)
    }
    val nulls = d.dims.indices.map(k => if (d.validity(k)) new Array[Boolean](n * cumDims(k)) else null).toArray
    val data = new Array[Byte](n * dataBytes)
    var i = 0; var p = buf.off
    while (i < n) {
      var k = 0
      while (k < d.dims.length) {
        if (d.validity(k)) {
          val c = cumDims(k); var j = 0
          while (j < c) { nulls(k)(i * c + j) = ((buf.a(p + (j >>> 3)) >>> (j & 7)) & 1) == 0; j += 1 }
          p += (c + 7) / 8
        }
        k += 1
      }
      System.arraycopy(buf.a, p, data, i * dataBytes, dataBytes); p += dataBytes
      i += 1
    }
    Codecs.nestFsl(d, n, nulls, new FixedValues(n * total, d.itemBits / 8, data, 0))
  }

  /** The validity bitmaps of rows with no item bytes (all-null items), one array per nullable layer. */
  private def readValidity(buf: Slice, n: Int): Array[Array[Boolean]] = {
    ref.check(buf.len.toLong >= n.toLong * bytesPerValue, s"fixed-size list buffer of ${buf.len} bytes for $n rows")
    val nulls = d.dims.indices.map(k => if (d.validity(k)) new Array[Boolean](n * cumDims(k)) else null).toArray
    var i = 0; var p = buf.off
    while (i < n) {
      var k = 0
      while (k < d.dims.length) {
        if (d.validity(k)) {
          val c = cumDims(k); val a = nulls(k); var j = 0
          while (j < c) { a(i * c + j) = ((buf.a(p + (j >>> 3)) >>> (j & 7)) & 1) == 0; j += 1 }
          p += (c + 7) / 8
        }
        k += 1
      }
      i += 1
    }
    nulls
  }
}

/** Each value separately compressed (LZ4 or ZSTD with their length prefixes); empty stays empty. */
private[structural] final class GeneralPerValue(scheme: Int, ref: PageRef) extends VarPerValueCodec {
  def decode(raw: VarValues): Values = {
    val n = raw.count
    val parts = new Array[Array[Byte]](n)
    var total = 0L; var i = 0
    while (i < n) {
      val s = raw.offsets(raw.offOff + i); val e = raw.offsets(raw.offOff + i + 1)
      parts(i) = if (e == s) Array.emptyByteArray else GeneralCompression.decompress(scheme, raw.data, s, e - s, ref.toString)
      total += parts(i).length; i += 1
    }
    ref.check(total < Int.MaxValue - 16, "decompressed values exceed 2 GiB")
    val data = new Array[Byte](total.toInt); val offs = new Array[Int](n + 1)
    i = 0; var o = 0
    while (i < n) { System.arraycopy(parts(i), 0, data, o, parts(i).length); o += parts(i).length; offs(i + 1) = o; i += 1 }
    new VarValues(n, offs, 0, data)
  }
}

/** Each value: fixed fields as raw bytes, variable fields as a length prefix and bytes, in field order. */
private[structural] final class VariablePackedStructPerValue(desc: EncodingsV21Protos.VariablePackedStruct, ref: PageRef)
  extends VarPerValueCodec {
  private val fields = desc.getFieldsList.asScala.toArray
  // width > 0: fixed bytes; width < 0: -(length prefix bytes)
  private val widths: Array[Int] = fields.map { f =>
    if (f.hasBitsPerValue) {
      ref.check(f.getBitsPerValue % 8 == 0 && f.getBitsPerValue > 0, s"packed field of ${f.getBitsPerValue} bits")
      (f.getBitsPerValue / 8).toInt
    } else {
      ref.check(f.getBitsPerLength == 32 || f.getBitsPerLength == 64, s"packed field length of ${f.getBitsPerLength} bits")
      -(f.getBitsPerLength / 8).toInt
    }
  }
  private val fixedCodecs = fields.map(f => if (f.hasBitsPerValue) Codecs.fixedPerValue(f.getValue, ref) else null)
  private val varCodecs = fields.map(f => if (!f.hasBitsPerValue) Codecs.varPerValue(f.getValue, ref) else null)

  def decode(raw: VarValues): Values = {
    val n = raw.count
    val fixedOut = widths.map(w => if (w > 0) new Array[Byte](n * w) else null)
    val varOffs = widths.map(w => if (w < 0) new Array[Int](n + 1) else null)
    val varData = widths.map(w => if (w < 0) new java.io.ByteArrayOutputStream() else null)
    var i = 0
    while (i < n) {
      var p = raw.offsets(raw.offOff + i); val end = raw.offsets(raw.offOff + i + 1)
      val empty = p == end
      var k = 0
      while (k < widths.length) {
        val w = widths(k)
        if (w > 0) {
          if (!empty) { ref.check(p + w <= end, "packed struct fixed field exceeds its row"); System.arraycopy(raw.data, p, fixedOut(k), i * w, w); p += w }
        } else {
          if (!empty) {
            ref.check(p - w <= end, "packed struct length prefix exceeds its row")
            val len = LE.uint(raw.data, p, -w); p -= w
            ref.check(len >= 0 && p + len <= end, s"packed struct field of $len bytes exceeds its row")
            varData(k).write(raw.data, p, len.toInt); p += len.toInt
          }
          varOffs(k)(i + 1) = varData(k).size()
        }
        k += 1
      }
      i += 1
    }
    val children = widths.indices.map { k =>
      if (widths(k) > 0) fixedCodecs(k).decode(Slice.of(fixedOut(k)), n)
      else varCodecs(k).decode(new VarValues(n, varOffs(k), 0, varData(k).toByteArray))
    }.toArray
    new StructValues(n, children)
  }
}
