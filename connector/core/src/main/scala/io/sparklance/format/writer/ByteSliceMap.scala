package io.sparklance.format.writer

import io.sparklance.format.codec.{LittleEndian => LE}

/**
 * An open-addressing map from byte ranges of one array to ints, with no allocation per
 * lookup: slots hold (offset, length, value) of the first occurrence.
 */
private[writer] final class ByteSliceMap(a: Array[Byte], initial: Int) {
  private var cap = Integer.highestOneBit(math.max(16, initial) * 2)
  private var offs = new Array[Int](cap)
  private var lens = empty(cap)
  private var vals = new Array[Int](cap)
  private var size = 0

  private def hash(off: Int, len: Int): Int = {
    var h = 0x9e3779b97f4a7c15L ^ len
    var i = 0
    while (i + 8 <= len) {
      h = (h ^ LE.i64(a, off + i)) * 0xff51afd7ed558ccdL; h ^= h >>> 29; i += 8
    }
    if (i < len) {
      val w = LE.loadPartial(a, off + i, len - i)
      h = (h ^ w) * 0xff51afd7ed558ccdL
    }
    h = (h ^ (h >>> 32)) * 0xc4ceb9fe1a85ec53L
    (h ^ (h >>> 29)).toInt
  }

  /**
   * Whether `[x, +len)` and `[y, +len)` hold the same bytes: short slices (most dictionary
   * values: numbers, codes, short strings) word by word, longer ones by Arrays.equals.
   */
  private def same(x: Int, y: Int, len: Int): Boolean =
    if (len > 32) java.util.Arrays.equals(a, x, x + len, a, y, y + len)
    else {
      var i = 0
      while (i + 8 <= len) { if (LE.i64(a, x + i) != LE.i64(a, y + i)) return false; i += 8 }
      while (i < len) { if (a(x + i) != a(y + i)) return false; i += 1 }
      true
    }

  def get(off: Int, len: Int): Int = {
    var s = hash(off, len) & (cap - 1)
    while (lens(s) >= 0) {
      if (lens(s) == len && same(offs(s), off, len)) return vals(s)
      s = (s + 1) & (cap - 1)
    }
    -1
  }

  /**
   * The value of `[off, +len)` if present; otherwise puts `v` for it and returns -1. One hash
   * and one probe sequence, where get-then-put would take two.
   */
  def getOrPut(off: Int, len: Int, v: Int): Int = {
    if (2 * (size + 1) > cap) grow()
    var s = hash(off, len) & (cap - 1)
    while (lens(s) >= 0) {
      if (lens(s) == len && same(offs(s), off, len)) return vals(s)
      s = (s + 1) & (cap - 1)
    }
    offs(s) = off; lens(s) = len; vals(s) = v; size += 1
    -1
  }

  def put(off: Int, len: Int, v: Int): Unit = {
    if (2 * (size + 1) > cap) grow()
    var s = hash(off, len) & (cap - 1)
    while (lens(s) >= 0) s = (s + 1) & (cap - 1)
    offs(s) = off; lens(s) = len; vals(s) = v; size += 1
  }

  private def empty(n: Int): Array[Int] = {
    val l = new Array[Int](n); java.util.Arrays.fill(l, -1); l
  }

  private def grow(): Unit = {
    val (o, l, v) = (offs, lens, vals)
    cap *= 2
    offs = new Array[Int](cap); lens = empty(cap); vals = new Array[Int](cap); size = 0
    var i = 0
    while (i < o.length) { if (l(i) >= 0) put(o(i), l(i), v(i)); i += 1 }
  }
}
