package io.sparklance.format.writer

/**
 * An open-addressing map from values of one or two words (8- and 16-byte values; `hi` 0 for
 * one word) to ints, with no allocation per lookup.
 */
private[writer] final class WordMap(initial: Int) {
  private var cap = Integer.highestOneBit(math.max(16, initial) * 2)
  private var los = new Array[Long](cap)
  private var his = new Array[Long](cap)
  private var vals = empty(cap)
  private var size = 0

  private def empty(n: Int): Array[Int] = {
    val v = new Array[Int](n); java.util.Arrays.fill(v, -1); v
  }

  /**
   * A full 64-bit mix (murmur3's finalizer): keys often differ only in their high bytes (the
   * last characters of a short string, a decimal's high digits), which a multiply alone
   * leaves out of the low bits a slot is taken from.
   */
  private def slot(lo: Long, hi: Long): Int = {
    var h = lo ^ (hi * 0x9e3779b97f4a7c15L)
    h ^= h >>> 33; h *= 0xff51afd7ed558ccdL
    h ^= h >>> 33; h *= 0xc4ceb9fe1a85ec53L
    h ^= h >>> 33
    h.toInt & (cap - 1)
  }

  /** The value of `(lo, hi)` if present; otherwise puts `v` (non-negative) and returns -1. */
  def getOrPut(lo: Long, hi: Long, v: Int): Int = {
    if (2 * (size + 1) > cap) grow()
    var s = slot(lo, hi)
    while (vals(s) >= 0) {
      if (los(s) == lo && his(s) == hi) return vals(s)
      s = (s + 1) & (cap - 1)
    }
    los(s) = lo; his(s) = hi; vals(s) = v; size += 1
    -1
  }

  private def grow(): Unit = {
    val (l, h, v) = (los, his, vals)
    cap *= 2
    los = new Array[Long](cap); his = new Array[Long](cap); vals = empty(cap)
    var i = 0
    while (i < l.length) {
      if (v(i) >= 0) {
        var s = slot(l(i), h(i))
        while (vals(s) >= 0) s = (s + 1) & (cap - 1)
        los(s) = l(i); his(s) = h(i); vals(s) = v(i)
      }
      i += 1
    }
  }
}
