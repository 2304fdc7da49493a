package io.sparklance.spark

/**
 * The first `limit` rows by one integral key (integers, dates, timestamps: what compares as a
 * long), kept as (null, key, row address) in primitive arrays: a heap with the row that comes
 * last in the order at its root, replaced by each row that comes before it. A row tied with
 * the root is not taken (which of tied rows are kept is unspecified, as in Spark's sort). No
 * allocation per row: the rows of a table appended in key order all enter the heap when read
 * in the reverse order (`ORDER BY id DESC`).
 */
final class LongKeyHeap(limit: Int, ascending: Boolean, nullsFirst: Boolean) {
  require(limit > 0, s"limit must be positive, not $limit")
  private val nulls = new Array[Boolean](limit)
  private val keys = new Array[Long](limit)
  private val addresses = new Array[Long](limit)
  private var size = 0

  /** Negative when (na, ka) comes before (nb, kb) in the order, 0 when tied. */
  private def compare(na: Boolean, ka: Long, nb: Boolean, kb: Long): Int =
    if (na || nb) {
      if (na && nb) 0
      else if (na == nullsFirst) -1
      else 1
    } else {
      val c = java.lang.Long.compare(ka, kb)
      if (ascending) c else -c
    }

  /** Offers one row; it is kept when it comes before the last row kept, or the heap has room. */
  def offer(isNull: Boolean, key: Long, address: Long): Unit =
    if (size < limit) {
      set(size, isNull, key, address)
      size += 1
      up(size - 1)
    } else if (compare(isNull, key, nulls(0), keys(0)) < 0) {
      set(0, isNull, key, address)
      down(0)
    }

  /** The row addresses kept, in no particular order. */
  def rowAddresses: Array[Long] = java.util.Arrays.copyOf(addresses, size)

  private def set(i: Int, isNull: Boolean, key: Long, address: Long): Unit = {
    nulls(i) = isNull
    keys(i) = key
    addresses(i) = address
  }

  /** Whether entry `i` comes after entry `j` (belongs nearer the root). */
  private def after(i: Int, j: Int): Boolean = compare(nulls(i), keys(i), nulls(j), keys(j)) > 0

  private def swap(i: Int, j: Int): Unit = {
    val n = nulls(i); nulls(i) = nulls(j); nulls(j) = n
    val k = keys(i); keys(i) = keys(j); keys(j) = k
    val a = addresses(i); addresses(i) = addresses(j); addresses(j) = a
  }

  private def up(start: Int): Unit = {
    var i = start
    while (i > 0 && after(i, (i - 1) / 2)) {
      swap(i, (i - 1) / 2)
      i = (i - 1) / 2
    }
  }

  private def down(start: Int): Unit = {
    var i = start
    var done = false
    while (!done) {
      val l = 2 * i + 1
      val r = l + 1
      var top = i
      if (l < size && after(l, top)) top = l
      if (r < size && after(r, top)) top = r
      if (top == i) done = true
      else {
        swap(i, top)
        i = top
      }
    }
  }
}
