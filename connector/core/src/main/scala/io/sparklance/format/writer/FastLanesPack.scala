package io.sparklance.format.writer

import io.sparklance.format.codec.{LittleEndian => LE}

/**
 * Packing into the fastlanes layout that Lance's InlineBitpacking uses (the inverse of
 * [[io.sparklance.format.codec.FastLanes]]): blocks of 1024 values of an S-bit word type
 * packed to W bits over 1024/S interleaved lanes; the r-th value of lane l is logical
 * element FL_ORDER[r/8]*16 + (r%8)*128 + l and lands at bit (r*W) mod S of word
 * LANES*floor(r*W/S)+l, spilling into the next word of its lane.
 */
private[writer] object FastLanesPack {
  private val FlOrder = Array(0, 4, 2, 6, 1, 5, 3, 7)

  /** Bits needed for the largest of values `[from, until)` taken as unsigned. */
  def bitWidth(a: Array[Byte], width: Int, from: Int, until: Int): Int = {
    var or = 0L; var i = from
    width match { // one loop per width: the width is not tested per value
      case 1 => while (i < until) { or |= a(i) & 0xffL; i += 1 }
      case 2 => while (i < until) { or |= LE.u16(a, 2 * i).toLong; i += 1 }
      case 4 => while (i < until) { or |= LE.u32(a, 4 * i); i += 1 }
      case _ => while (i < until) { or |= LE.i64(a, 8 * i); i += 1 }
    }
    64 - java.lang.Long.numberOfLeadingZeros(or)
  }

  /**
   * Appends one InlineBitpacking block: W as one S-bit word, then 1024*W/S words, packing
   * values `[from, until)` (at most 1024; the rest of the block is zeros).
   */
  def packBlock(a: Array[Byte], width: Int, from: Int, until: Int, out: ByteBuf): Unit = {
    val w = bitWidth(a, width, from, until)
    put(out, width, w.toLong)
    packWords(a, width, from, until, w, out)
  }

  /** Appends the 1024*W/S words packing values `[from, until)` (at most 1024, zero-padded) to width `w`. */
  def packWords(a: Array[Byte], width: Int, from: Int, until: Int, w: Int, out: ByteBuf): Unit = {
    val s = width * 8
    val lanes = 1024 / s
    val scratch = scratches.get
    val nWords = 1024 * w / s
    val words = scratch.words
    java.util.Arrays.fill(words, 0, nWords, 0L)
    if (w > 0) {
      val vals = scratch.vals
      if (until - from < 1024) java.util.Arrays.fill(vals, until - from, 1024, 0L)
      var i = from
      width match {
        case 1 => while (i < until) { vals(i - from) = a(i) & 0xffL; i += 1 }
        case 2 => while (i < until) { vals(i - from) = LE.u16(a, 2 * i).toLong; i += 1 }
        case 4 => while (i < until) { vals(i - from) = LE.u32(a, 4 * i); i += 1 }
        case _ => while (i < until) { vals(i - from) = LE.i64(a, 8 * i); i += 1 }
      }
      val mask = if (s == 64) -1L else (1L << s) - 1
      var r = 0
      while (r < s) {
        val bit = r * w; val shift = bit % s
        val lo = lanes * (bit / s); val hi = lo + lanes
        val base = FlOrder(r >>> 3) * 16 + (r & 7) * 128
        var l = 0
        if (shift + w > s) {
          // The value spills into the next word of its lane.
          while (l < lanes) {
            val v = vals(base + l)
            words(lo + l) |= (v << shift) & mask
            words(hi + l) |= (v >>> (s - shift)) & mask
            l += 1
          }
        } else {
          while (l < lanes) { words(lo + l) |= (vals(base + l) << shift) & mask; l += 1 }
        }
        r += 1
      }
    }
    val at = out.extend(nWords * width)
    val o = out.array
    var k = 0
    width match {
      case 1 => while (k < nWords) { o(at + k) = words(k).toByte; k += 1 }
      case 2 => while (k < nWords) { LE.putI16(o, at + 2 * k, words(k).toShort); k += 1 }
      case 4 => while (k < nWords) { LE.putI32(o, at + 4 * k, words(k).toInt); k += 1 }
      case _ => while (k < nWords) { LE.putI64(o, at + 8 * k, words(k)); k += 1 }
    }
  }

  /**
   * A block's values widened to longs and its packed words (at most 1024 of each): one pair
   * per thread, reused from block to block instead of 16 KiB allocated and zeroed per block.
   */
  private final class Scratch {
    val vals = new Array[Long](1024)
    val words = new Array[Long](1024)
  }
  private val scratches = ThreadLocal.withInitial[Scratch](() => new Scratch)

  @inline private def put(out: ByteBuf, width: Int, v: Long): Unit = width match {
    case 1 => out.u8(v.toInt)
    case 2 => out.u16(v.toInt)
    case 4 => out.u32(v)
    case _ => out.u64(v)
  }

  /**
   * OutOfLineBitpacking of values `[from, until)` at one width `w` for all blocks: whole
   * blocks of 1024 packed, and a shorter tail either packed as a zero-padded block or left
   * as raw values, whichever pylance's rule picks (pad when the padding costs fewer bits
   * than packing the tail saves). Readers tell the two apart by the buffer length.
   */
  def packOutOfLine(
      a: Array[Byte],
      width: Int,
      from: Int,
      until: Int,
      w: Int,
      out: ByteBuf
  ): Unit = {
    val s = width * 8
    var b = from
    while (until - b >= 1024) { packWords(a, width, b, b + 1024, w, out); b += 1024 }
    val tail = until - b
    if (tail > 0) {
      if (w.toLong * (1024 - tail) < (s - w).toLong * tail) packWords(a, width, b, until, w, out)
      else out.bytes(a, b * width, tail * width)
    }
  }

  /** Bytes [[packOutOfLine]] writes. */
  def outOfLineSize(width: Int, n: Int, w: Int): Long = {
    val s = width * 8
    val full = n / 1024; val tail = n % 1024
    val block = 128L * w
    full * block + (if (tail == 0) 0L
                    else if (w.toLong * (1024 - tail) < (s - w).toLong * tail) block
                    else tail.toLong * width)
  }

  /** Bytes of the blocks packing values `[from, until)`. */
  def packedSize(a: Array[Byte], width: Int, from: Int, until: Int): Long = {
    var total = 0L; var b = from
    while (b < until) {
      val e = math.min(until, b + 1024)
      total += width + 128L * bitWidth(a, width, b, e)
      b = e
    }
    total
  }
}
