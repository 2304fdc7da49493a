package io.sparklance.table

/**
 * A set of longs as a bitmap over `[min, min + 64 * words.length)`: the evaluator's form of
 * an integer IN list that is long and dense enough (the join keys of a runtime filter, say),
 * where a bit test per row beats a binary search.
 */
final class LongBits(val min: Long, val words: Array[Long]) {
  def contains(v: Long): Boolean = {
    val k = v - min
    k >= 0 && k < (words.length.toLong << 6) && (words((k >>> 6).toInt) & (1L << k)) != 0
  }
}

object LongBits {

  /** Lists shorter than this stay a sorted array (a few comparisons per row). */
  val MinValues = 16

  /** The most bits a bitmap may span (8 MiB), and how sparse it may be per value. */
  val MaxBits: Long = 1L << 26
  val MaxBitsPerValue: Long = 1L << 16

  /** `sorted` as a bitmap when it is long and dense enough, else itself. */
  def orSorted(sorted: Array[Long]): AnyRef =
    if (sorted.length < MinValues) sorted
    else {
      val lo = sorted(0)
      val span = sorted(sorted.length - 1) - lo + 1 // negative on overflow
      if (span <= 0 || span > MaxBits || span > MaxBitsPerValue * sorted.length) sorted
      else {
        val words = new Array[Long](((span + 63) >>> 6).toInt)
        var i = 0
        while (i < sorted.length) {
          val k = sorted(i) - lo
          words((k >>> 6).toInt) |= 1L << k
          i += 1
        }
        new LongBits(lo, words)
      }
    }
}
