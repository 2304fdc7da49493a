package io.sparklance.format.codec

/**
 * Unpacking of the fastlanes bitpacking layout (Lance's `lance-bitpacking` crate, a fork of
 * spiraldb/fastlanes): blocks of 1024 values of an S-bit word type packed to W bits.
 *
 * The layout interleaves 1024/S "lanes": the r-th packed value of lane l lives at bit
 * (r*W) mod S of word LANES*floor(r*W/S)+l and is logical element
 * FL_ORDER[r/8]*16 + (r%8)*128 + l. For a fixed r both the input words (over l) and the output
 * elements (over l) are contiguous, so the inner loop over lanes is a straight, branch-free
 * pass the JIT vectorizes well; no generated code per width is needed.
 */
object FastLanes {
  final val BlockValues = 1024
  private val FlOrder = Array(0, 4, 2, 6, 1, 5, 3, 7)

  private def base(r: Int): Int = FlOrder(r >>> 3) * 16 + (r & 7) * 128

  /** Words of an S-bit type in one packed block of width `w`. */
  def wordsPerBlock(wordBits: Int, w: Int): Int = BlockValues * w / wordBits

  /** Unpacks one block of 64-bit words: `in(inOff ...)` → `out(outOff until outOff+1024)`. */
  def unpack64(in: Array[Long], inOff: Int, w: Int, out: Array[Long], outOff: Int): Unit = {
    val lanes = 16
    if (w == 0) { java.util.Arrays.fill(out, outOff, outOff + BlockValues, 0L); return }
    val mask = if (w == 64) -1L else (1L << w) - 1
    var r = 0
    while (r < 64) {
      val bit = r * w; val wi = bit >>> 6; val shift = bit & 63
      val src = inOff + lanes * wi; val dst = outOff + base(r)
      if (shift + w > 64) {
        val src2 = src + lanes; val back = 64 - shift
        var l = 0
        while (l < lanes) {
          out(dst + l) = ((in(src + l) >>> shift) | (in(src2 + l) << back)) & mask; l += 1
        }
      } else {
        var l = 0
        while (l < lanes) { out(dst + l) = (in(src + l) >>> shift) & mask; l += 1 }
      }
      r += 1
    }
  }

  def unpack32(in: Array[Int], inOff: Int, w: Int, out: Array[Int], outOff: Int): Unit = {
    val lanes = 32
    if (w == 0) { java.util.Arrays.fill(out, outOff, outOff + BlockValues, 0); return }
    val mask = if (w == 32) -1 else (1 << w) - 1
    var r = 0
    while (r < 32) {
      val bit = r * w; val wi = bit >>> 5; val shift = bit & 31
      val src = inOff + lanes * wi; val dst = outOff + base(r)
      if (shift + w > 32) {
        val src2 = src + lanes; val back = 32 - shift
        var l = 0
        while (l < lanes) {
          out(dst + l) = ((in(src + l) >>> shift) | (in(src2 + l) << back)) & mask; l += 1
        }
      } else {
        var l = 0
        while (l < lanes) { out(dst + l) = (in(src + l) >>> shift) & mask; l += 1 }
      }
      r += 1
    }
  }

  /** 16-bit words, held zero-extended in ints (u16 is what rep/def levels use). */
  def unpack16(in: Array[Int], inOff: Int, w: Int, out: Array[Int], outOff: Int): Unit =
    unpackSmall(in, inOff, w, out, outOff, 16)

  /** 8-bit words, held zero-extended in ints. */
  def unpack8(in: Array[Int], inOff: Int, w: Int, out: Array[Int], outOff: Int): Unit =
    unpackSmall(in, inOff, w, out, outOff, 8)

  private def unpackSmall(
      in: Array[Int],
      inOff: Int,
      w: Int,
      out: Array[Int],
      outOff: Int,
      s: Int
  ): Unit = {
    val lanes = BlockValues / s
    if (w == 0) { java.util.Arrays.fill(out, outOff, outOff + BlockValues, 0); return }
    val mask = (1 << w) - 1
    var r = 0
    while (r < s) {
      val bit = r * w; val wi = bit / s; val shift = bit % s
      val src = inOff + lanes * wi; val dst = outOff + base(r)
      if (shift + w > s) {
        val src2 = src + lanes; val back = s - shift
        var l = 0
        while (l < lanes) {
          out(dst + l) = ((in(src + l) >>> shift) | (in(src2 + l) << back)) & mask; l += 1
        }
      } else {
        var l = 0
        while (l < lanes) { out(dst + l) = (in(src + l) >>> shift) & mask; l += 1 }
      }
      r += 1
    }
  }
}
