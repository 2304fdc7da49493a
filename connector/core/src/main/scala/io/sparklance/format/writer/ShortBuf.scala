package io.sparklance.format.writer

/** A growable array of u16 levels. */
final class ShortBuf(initial: Int = 1024) {
  private var a = new Array[Short](math.max(initial, 16))
  private var n = 0
  def size: Int = n
  def array: Array[Short] = a
  def clear(): Unit = n = 0
  def add(v: Short): Unit = {
    if (n == a.length) a = java.util.Arrays.copyOf(a, a.length * 2); a(n) = v; n += 1
  }
  def addAll(src: Array[Short], from: Int, until: Int): Unit = {
    val k = until - from
    ensure(k)
    System.arraycopy(src, from, a, n, k); n += k
  }

  /** Appends `k` levels of 0 (`src` null) or `src`'s first `k`. */
  def addOrZeros(src: Array[Short], k: Int): Unit =
    if (src != null) addAll(src, 0, k)
    else { ensure(k); java.util.Arrays.fill(a, n, n + k, 0.toShort); n += k }
  private def ensure(k: Int): Unit =
    if (n + k > a.length) {
      val cap = math.max(n + k, a.length * 2)
      if (n >= a.length / 2) a = java.util.Arrays.copyOf(a, cap)
      else { val b = new Array[Short](cap); System.arraycopy(a, 0, b, 0, n); a = b }
    }
  def apply(i: Int): Short = a(i)

  /** Levels the array holds room for. */
  def capacity: Int = a.length
}
