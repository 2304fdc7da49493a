package io.sparklance.format

/**
 * UTF-8 validation of decoded string values, as pylance (Arrow) refuses a page whose strings
 * are not valid UTF-8 instead of returning garbled text. Well-formed means RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF, no truncated sequences.
 *
 * The fast path ORs whole stretches of bytes together: all-ASCII data (the common case) is
 * checked at memory speed; only a stretch with a high bit set is walked value by value.
 */
object Utf8Validator {
  private val Stretch = 4096

  /**
   * The first value among `[from, until)` (value i is `data[offsets(offOff + i),
   * offsets(offOff + i + 1))`) that is not valid UTF-8, or -1 when all are.
   */
  def firstInvalid(
      offsets: Array[Int],
      offOff: Int,
      data: Array[Byte],
      from: Int,
      until: Int
  ): Int = {
    if (from >= until) return -1
    val start = offsets(offOff + from)
    val end = offsets(offOff + until)
    if (isAscii(data, start, end)) return -1
    var i = from
    while (i < until) {
      val s = offsets(offOff + i)
      val e = offsets(offOff + i + 1)
      if (e > s && !valid(data, s, e)) return i
      i += 1
    }
    -1
  }

  /** The first value of `a` that is not valid UTF-8, or -1. */
  def firstInvalid(a: VarBinaryArray): Int = firstInvalid(a.offsets, 0, a.data, 0, a.length)

  private val Longs = java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
    classOf[Array[Long]],
    java.nio.ByteOrder.LITTLE_ENDIAN
  )
  private val HighBits = 0x8080808080808080L

  /** Whether bytes `[start, end)` are all below 0x80: eight at a time. */
  def isAscii(data: Array[Byte], start: Int, end: Int): Boolean = {
    var i = start
    while (i < end) {
      val stop = math.min(end, i + Stretch)
      var acc = 0L
      while (i + 8 <= stop) { acc |= (Longs.get(data, i): Long); i += 8 }
      while (i < stop) { acc |= data(i); i += 1 }
      if ((acc & HighBits) != 0) return false
    }
    true
  }

  /**
   * The characters of well-formed UTF-8 bytes `[start, end)`: the bytes that do not continue
   * a character (`10xxxxxx`), counted eight at a time. On well-formed bytes this is what
   * Spark's `UTF8String.numChars` counts one character at a time.
   */
  def charCount(data: Array[Byte], start: Int, end: Int): Int = {
    var continuations = 0
    var i = start
    while (i + 8 <= end) {
      val w: Long = Longs.get(data, i)
      // A byte's bit 7 set and bit 6 (shifted up into bit 7) clear.
      continuations += java.lang.Long.bitCount(w & ~(w << 1) & HighBits)
      i += 8
    }
    while (i < end) { if ((data(i) & 0xc0) == 0x80) continuations += 1; i += 1 }
    end - start - continuations
  }

  /** Whether bytes `[start, end)` are well-formed UTF-8. */
  def valid(d: Array[Byte], start: Int, end: Int): Boolean = {
    var i = start
    while (i < end) {
      val b = d(i)
      if (b >= 0) i += 1
      else {
        val c = b & 0xff
        if (c < 0xc2) return false // a continuation byte, or an overlong 2-byte lead
        if (c < 0xe0) {
          if (i + 1 >= end || !cont(d(i + 1))) return false
          i += 2
        } else if (c < 0xf0) {
          if (i + 2 >= end) return false
          val c1 = d(i + 1) & 0xff
          if (
            !cont(d(i + 1)) || !cont(d(i + 2)) ||
            (c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0)
          ) return false
          i += 3
        } else if (c < 0xf5) {
          if (i + 3 >= end) return false
          val c1 = d(i + 1) & 0xff
          if (
            !cont(d(i + 1)) || !cont(d(i + 2)) || !cont(d(i + 3)) ||
            (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90)
          ) return false
          i += 4
        } else return false
      }
    }
    true
  }

  private def cont(b: Byte): Boolean = (b & 0xc0) == 0x80

  /** What a refusal says about value `i`: its first bytes in hex. */
  def describe(offsets: Array[Int], offOff: Int, data: Array[Byte], i: Int): String = {
    val s = offsets(offOff + i)
    val e = offsets(offOff + i + 1)
    val shown = (s until math.min(e, s + 16)).map(k => f"${data(k) & 0xff}%02x").mkString(" ")
    s"a string value is not valid UTF-8 (${e - s} bytes: $shown${if (e - s > 16) " …" else ""})"
  }
}
