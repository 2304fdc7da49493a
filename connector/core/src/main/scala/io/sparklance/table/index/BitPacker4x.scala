package io.sparklance.table.index

/**
 * Blocks of 128 u32 values bit-packed as the Rust `bitpacking` crate's `BitPacker4x` packs
 * them (the layout of an INVERTED index's full posting blocks in pylance 14): 4 lanes, value
 * `i` in lane `i % 4`; each lane packs its 32 values LSB first into u32 words, and word `k`
 * of lane `j` lies at byte `16 k + 4 j` (little endian): `nbits * 16` bytes in all. Sorted
 * blocks pack the differences to the value before (to `initial` for the first).
 */
private[index] object BitPacker4x {
  val BlockLen = 128

  /** Bits needed for the largest of `values`. */
  def numBits(values: Array[Int]): Int = {
    var or = 0
    var i = 0
    while (i < BlockLen) { or |= values(i); i += 1 }
    32 - Integer.numberOfLeadingZeros(or)
  }

  /** `values`' differences to the value before (to `initial` for the first). */
  def deltas(initial: Int, values: Array[Int]): Array[Int] = {
    val d = new Array[Int](BlockLen)
    var prev = initial
    var i = 0
    while (i < BlockLen) { d(i) = values(i) - prev; prev = values(i); i += 1 }
    d
  }

  /** Packs 128 values of at most `nbits` bits each into `out` at `at`. */
  def pack(values: Array[Int], nbits: Int, out: Array[Byte], at: Int): Unit = {
    java.util.Arrays.fill(out, at, at + nbits * 16, 0.toByte)
    if (nbits == 0) return
    var lane = 0
    while (lane < 4) {
      var r = 0
      while (r < 32) {
        val v = values(4 * r + lane).toLong & 0xffffffffL
        val bit = r * nbits
        var word = bit >>> 5
        var shift = bit & 31
        var rest = v
        var left = nbits
        while (left > 0) {
          val pos = at + 16 * word + 4 * lane
          val w = (rest << shift) & 0xffffffffL
          orInt(out, pos, w.toInt)
          val took = 32 - shift
          rest = rest >>> took
          left -= took
          word += 1
          shift = 0
        }
        r += 1
      }
      lane += 1
    }
  }

  /** The 128 values of `nbits` bits packed in `in` at `at`. */
  def unpack(in: Array[Byte], at: Int, nbits: Int): Array[Int] = {
    val out = new Array[Int](BlockLen)
    if (nbits == 0) return out
    val mask = if (nbits == 32) 0xffffffffL else (1L << nbits) - 1
    var lane = 0
    while (lane < 4) {
      var r = 0
      while (r < 32) {
        val bit = r * nbits
        val word = bit >>> 5
        val shift = bit & 31
        var v = (readInt(in, at + 16 * word + 4 * lane) & 0xffffffffL) >>> shift
        if (shift + nbits > 32)
          v |= (readInt(in, at + 16 * (word + 1) + 4 * lane) & 0xffffffffL) << (32 - shift)
        out(4 * r + lane) = (v & mask).toInt
        r += 1
      }
      lane += 1
    }
    out
  }

  private def orInt(b: Array[Byte], at: Int, v: Int): Unit = {
    b(at) = (b(at) | v).toByte
    b(at + 1) = (b(at + 1) | (v >>> 8)).toByte
    b(at + 2) = (b(at + 2) | (v >>> 16)).toByte
    b(at + 3) = (b(at + 3) | (v >>> 24)).toByte
  }

  private[index] def readInt(b: Array[Byte], at: Int): Int =
    (b(at) & 0xff) | (b(at + 1) & 0xff) << 8 | (b(at + 2) & 0xff) << 16 | (b(at + 3) & 0xff) << 24
}
