package io.sparklance.format.structural

import io.sparklance.format.codec.{FastLanes, LittleEndian => LE}

/*
 * Fixed-width values: plain (Flat) and FastLanes bitpacked, inline (the bit width stored with each
 * block) or out of line (one width for the page), in mini-block chunks and whole blocks.
 * [[Codecs]] picks these from a page's encodings.
 */

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
  def unpackToInts(
      a: Array[Byte],
      off: Int,
      s: Int,
      w: Int,
      out: Array[Int],
      outOff: Int,
      count: Int
  ): Unit = {
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
  def unpackBlocks(
      a: Array[Byte],
      off: Int,
      s: Int,
      w: Int,
      blocks: Int,
      out: Array[Byte],
      outOff: Int
  ): Unit = {
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
            FastLanes.unpack32(in, 0, w, o, 0); LE.fromInts(o, 0, 1024, out, outOff + b * 4096);
            b += 1
          }
        case 16 =>
          while (b < blocks) {
            LE.u16sInto(a, off + b * wordsPerBlock * 2, wordsPerBlock, in)
            FastLanes.unpack16(in, 0, w, o, 0); LE.fromIntsAs16(o, 0, 1024, out, outOff + b * 2048);
            b += 1
          }
        case 8 =>
          while (b < blocks) {
            LE.u8sInto(a, off + b * wordsPerBlock, wordsPerBlock, in)
            FastLanes.unpack8(in, 0, w, o, 0); LE.fromIntsAs8(o, 0, 1024, out, outOff + b * 1024);
            b += 1
          }
      }
    }
  }
}

private[structural] final class FlatMini(bits: Int, ref: PageRef) extends MiniBlockCodec {
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = FlatMini.decode(bufs(0), n, bits, ref)
}

private[structural] object FlatMini {
  def decode(b: Slice, n: Int, bits: Int, ref: PageRef): Values = {
    val need = (n.toLong * bits + 7) / 8
    ref.check(
      b.len >= need,
      s"Flat buffer of ${b.len} bytes holds fewer than $n values of $bits bits"
    )
    if (bits == 1) new FixedValues(n, 1, Codecs.bitsToBytes(b.a, b.off, n), 0)
    else new FixedValues(n, bits / 8, b.a, b.off)
  }
}

/** A chunk of at most 1024 values: [W as one S-bit word][1024*W/S words]. */
private[structural] final class InlineBitpackMini(s: Int, ref: PageRef) extends MiniBlockCodec {
  private val unpacker = new Bitpack

  /**
   * The bytes of the last chunk's values, reused for the next chunk: a page owns its codec,
   * and a page's chunk is consumed (its values appended to the batch) before the page decodes
   * the next one. A fresh array per chunk cost a sixth of a scan of bitpacked columns.
   */
  private var scratch: Array[Byte] = Array.emptyByteArray
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val need = InlineBitpackMini.decodedBytes(n, s)
    if (scratch.length < need) scratch = new Array[Byte](need)
    InlineBitpackMini.decodeInto(bufs(0), n, s, ref, unpacker, scratch)
  }

  private var indexScratch: Array[Int] = Array.emptyIntArray

  /**
   * The chunk's `n` values as ints (dictionary indices), unpacked straight into an int array
   * reused as [[decode]]'s bytes are: its first `n` entries are the chunk's.
   */
  def decodeIndices(bufs: Array[Slice], n: Int): Array[Int] = {
    val b = bufs(0)
    val wb = s / 8
    val blocks = (n + 1023) / 1024
    if (indexScratch.length < n) indexScratch = new Array[Int](n)
    val out = indexScratch
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
    if (pos + wb + bytes > b.end) throw ref.corrupt(
      s"bitpacked chunk of ${b.len} bytes is shorter than its ${bytes}-byte block"
    )
    w.toInt
  }

  /** The bytes `n` values of `s` bits unpack into: whole blocks of 1024. */
  def decodedBytes(n: Int, s: Int): Int = math.max((n + 1023) / 1024, 1) * 1024 * (s / 8)

  def decode(b: Slice, n: Int, s: Int, ref: PageRef, unpacker: Bitpack): Values =
    decodeInto(b, n, s, ref, unpacker, new Array[Byte](decodedBytes(n, s)))

  /** The `n` values unpacked into `out` (at least [[decodedBytes]] long), as values over it. */
  def decodeInto(
      b: Slice,
      n: Int,
      s: Int,
      ref: PageRef,
      unpacker: Bitpack,
      out: Array[Byte]
  ): Values = {
    val wb = s / 8
    val blocks = (n + 1023) / 1024
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

private[structural] final class FlatBlock(bits: Int, ref: PageRef) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = FlatMini.decode(buf, n, bits, ref)
}

private[structural] final class InlineBitpackBlock(s: Int, ref: PageRef) extends BlockCodec {
  private val unpacker = new Bitpack
  def decode(buf: Slice, n: Int): Values =
    if (n == 0) new FixedValues(0, s / 8, new Array[Byte](0), 0)
    else InlineBitpackMini.decode(buf, n, s, ref, unpacker)
}

/** Whole blocks of 1024 at one width; the tail is either raw values or one padded block. */
private[structural] final class OutOfLineBitpackBlock(s: Int, w: Int, ref: PageRef)
    extends BlockCodec {
  private val unpacker = new Bitpack
  def decode(buf: Slice, n: Int): Values = {
    val wb = s / 8
    val full = n / 1024; val tail = n % 1024
    val perBlock = 128L * w
    val raw = full * perBlock + tail.toLong * wb
    val padded = full * perBlock + (if (tail > 0) perBlock else 0)
    ref.check(
      buf.len == raw || buf.len == padded,
      s"bitpacked buffer of ${buf.len} bytes for $n values of $w bits (expected $raw or $padded)"
    )
    val blocks = if (buf.len == padded) (n + 1023) / 1024 else full
    val out = new Array[Byte](math.max(blocks * 1024, n) * wb)
    unpacker.unpackBlocks(buf.a, buf.off, s, w, blocks, out, 0)
    if (blocks == full && tail > 0)
      System.arraycopy(buf.a, buf.off + (full * perBlock).toInt, out, full * 1024 * wb, tail * wb)
    new FixedValues(n, wb, out, 0)
  }
}
