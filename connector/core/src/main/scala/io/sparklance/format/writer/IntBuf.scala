package io.sparklance.format.writer

/** A growable array of ints (offsets). */
final class IntBuf(initial: Int = 1024) {
  private var a = new Array[Int](math.max(initial, 16))
  private var n = 0
  def size: Int = n
  def array: Array[Int] = a
  def clear(): Unit = n = 0

  /** Keeps the first `size` ints. */
  def truncate(size: Int): Unit = { require(size >= 0 && size <= n); n = size }
  def add(v: Int): Unit = {
    if (n == a.length) a = java.util.Arrays.copyOf(a, a.length * 2); a(n) = v; n += 1
  }
  def apply(i: Int): Int = a(i)

  /** Ints the array holds room for. */
  def capacity: Int = a.length
}
