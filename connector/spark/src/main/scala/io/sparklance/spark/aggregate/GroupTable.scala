package io.sparklance.spark.aggregate

/**
 * Groups keyed by `width` longs (each group column's code, see [[GroupKeys]], and a null
 * mask), numbered densely from 0 in order of arrival: open addressing on primitive arrays,
 * so looking up a row allocates nothing.
 */
final class GroupTable(width: Int) {
  private var slots = new Array[Int](1024) // group id + 1; 0 = empty
  private var keys = new Array[Long](256 * math.max(width, 1))
  private var count = 0

  def size: Int = count

  /** Column `j` of group `g`'s key. */
  def key(g: Int, j: Int): Long = keys(g * width + j)

  /** The id of the group of `probe` (its first `width` longs), added if new. */
  def idOf(probe: Array[Long]): Int = {
    val mask = slots.length - 1
    var s = hash(probe) & mask
    while (true) {
      val g = slots(s) - 1
      if (g < 0) return add(probe, s)
      if (same(g, probe)) return g
      s = (s + 1) & mask
    }
    -1
  }

  /** Adds `probe` as the next group, in the empty `slot`. */
  private def add(probe: Array[Long], slot: Int): Int = {
    val g = count
    if ((g + 1) * width > keys.length) keys = java.util.Arrays.copyOf(keys, keys.length * 2)
    System.arraycopy(probe, 0, keys, g * width, width)
    slots(slot) = g + 1
    count += 1
    if (count * 2 > slots.length) grow()
    g
  }

  private def same(g: Int, probe: Array[Long]): Boolean = {
    val o = g * width
    var j = 0
    while (j < width) { if (keys(o + j) != probe(j)) return false; j += 1 }
    true
  }

  private def hash(probe: Array[Long]): Int = hashAt(probe, 0)

  private def hashAt(a: Array[Long], o: Int): Int = {
    var h = 0x9e3779b97f4a7c15L
    var j = 0
    while (j < width) { h = (h ^ a(o + j)) * 0xbf58476d1ce4e5b9L; h ^= h >>> 31; j += 1 }
    (h ^ (h >>> 32)).toInt & Int.MaxValue
  }

  private def grow(): Unit = {
    slots = new Array[Int](slots.length * 2)
    val mask = slots.length - 1
    var g = 0
    while (g < count) {
      var s = hashAt(keys, g * width) & mask
      while (slots(s) != 0) s = (s + 1) & mask
      slots(s) = g + 1
      g += 1
    }
  }
}
