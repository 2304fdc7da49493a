package io.sparklance.format.codec

/**
 * FSST string compression (Boncz, Neumann, Leis: "FSST: Fast Random Access String
 * Compression", VLDB 2020), writing the symbol table in the serialized form Lance reads
 * (see [[Fsst]]): up to 255 symbols of 1..8 bytes, code 255 escaping a literal byte.
 *
 * The table is built as the paper describes: on a sample of about 16 KiB of whole strings,
 * five rounds each compress the sample with the current table, count how often every symbol
 * and every pair of adjacent symbols occurs, and keep the 255 candidates (symbols and
 * concatenations of two) with the highest gain, frequency times length. The table that
 * compressed the sample best is kept. Compression is greedy longest match: a symbol of three
 * or more bytes found through a hash of its first three bytes, else a two-byte symbol, else
 * a one-byte symbol, else an escape.
 */
object FsstEncoder {
  final val TableBytes = 8 + 256 * 8 + 256
  private final val Magic = 0x46535354L
  private final val Esc = 255
  private final val MaxSymbols = 255
  private final val SampleTarget = 16 * 1024
  private final val HashBits = 12
  private final val HashSize = 1 << HashBits

  /** The result: the serialized symbol table and the codes of every string. */
  final class Compressed(val table: Array[Byte], val offsets: Array[Int], val codes: Array[Byte]) {
    def codeBytes: Int = offsets(offsets.length - 1)
  }

  /**
   * A symbol table during construction and for compression. Codes 0..255 stand for the
   * single bytes (escaped when no symbol covers them); symbols get codes from 256 up.
   */
  private final class Table {
    val value = new Array[Long](256 + MaxSymbols + 1)
    val len = new Array[Int](256 + MaxSymbols + 1)
    var n = 0
    /** Code of the one-byte symbol for each byte, or the byte itself (an escape). */
    val byteCode: Array[Int] = Array.tabulate(256)(identity)
    /** Code of the two-byte symbol for each little-endian byte pair, or -1. */
    val pairCode: Array[Int] = Array.fill(65536)(-1)
    /** Code of the symbol of 3+ bytes whose first three bytes hash here, or -1. */
    val longCode: Array[Int] = Array.fill(HashSize)(-1)
    locally { var b = 0; while (b < 256) { value(b) = b.toLong; len(b) = 1; b += 1 } }

    def add(v: Long, l: Int): Boolean = {
      if (n >= MaxSymbols) return false
      val code = 256 + n
      l match {
        case 1 => val b = (v & 0xFF).toInt; if (byteCode(b) >= 256) return false; byteCode(b) = code
        case 2 => val p = (v & 0xFFFF).toInt; if (pairCode(p) >= 0) return false; pairCode(p) = code
        case _ => val h = hash3(v); if (longCode(h) >= 0) return false; longCode(h) = code
      }
      value(code) = v; len(code) = l; n += 1
      true
    }

    /** Longest symbol at `p` of `a` (string ends at `end`); returns its code (< 256: escape). */
    @inline def longest(a: Array[Byte], p: Int, end: Int): Int = {
      val rem = end - p
      if (rem >= 3) {
        // One load serves the long, pair and byte lookups.
        val w = load(a, p, math.min(rem, 8))
        val c = longCode(hash3(w))
        if (c >= 0) { val l = len(c); if (l <= rem && (w & mask(l)) == value(c)) return c }
        val c2 = pairCode((w & 0xFFFF).toInt)
        if (c2 >= 0) c2 else byteCode((w & 0xFF).toInt)
      } else {
        if (rem == 2) {
          val c = pairCode((a(p) & 0xFF) | ((a(p + 1) & 0xFF) << 8))
          if (c >= 0) return c
        }
        byteCode(a(p) & 0xFF)
      }
    }
  }

  @inline private def mask(l: Int): Long = if (l >= 8) -1L else (1L << (8 * l)) - 1
  @inline private def hash3(w: Long): Int = {
    val x = (w & 0xFFFFFFL) * 2971215073L
    ((x ^ (x >>> 15)) & (HashSize - 1)).toInt
  }
  /** Little-endian load of `n` (1..8) bytes at `p` (one 8-byte read where the array allows). */
  @inline private def load(a: Array[Byte], p: Int, n: Int): Long =
    if (p + 8 <= a.length) LittleEndian.i64(a, p) & mask(n)
    else {
      var w = 0L; var i = 0
      while (i < n) { w |= (a(p + i) & 0xFFL) << (8 * i); i += 1 }
      w
    }

  /**
   * Compresses strings `data[offsets(i), offsets(i+1))` for `i < n` (offsets relative to
   * `data`, `offsets(0)` may be non-zero). Returns codes with offsets starting at 0.
   */
  def compress(data: Array[Byte], offsets: Array[Int], n: Int): Compressed = {
    val t = build(data, offsets, n)
    val total = offsets(n) - offsets(0)
    val out = new Array[Byte](math.max(16, 2 * total))
    val outOff = new Array[Int](n + 1)
    var o = 0
    var i = 0
    while (i < n) {
      var p = offsets(i); val end = offsets(i + 1)
      while (p < end) {
        val c = t.longest(data, p, end)
        if (c < 256) { out(o) = Esc.toByte; out(o + 1) = data(p); o += 2; p += 1 }
        else { out(o) = (c - 256).toByte; o += 1; p += t.len(c) }
      }
      i += 1
      outOff(i) = o
    }
    new Compressed(serialize(t), outOff, java.util.Arrays.copyOf(out, o))
  }

  private def serialize(t: Table): Array[Byte] = {
    val out = new Array[Byte](TableBytes)
    // Header: magic, encoder switch on, suffix limit and terminator (unused by decoders), count.
    LittleEndian.putI64(out, 0, (Magic << 32) | (1L << 24) | (t.n.toLong & 0xFF))
    var i = 0
    while (i < t.n) {
      LittleEndian.putI64(out, 8 + 8 * i, t.value(256 + i))
      out(8 + 8 * t.n + i) = t.len(256 + i).toByte
      i += 1
    }
    out
  }

  /** Indices of whole strings making a sample of about 16 KiB, drawn reproducibly. */
  private def sample(offsets: Array[Int], n: Int): Array[Int] = {
    val total = offsets(n) - offsets(0)
    if (total <= SampleTarget) return Array.range(0, n)
    val picked = scala.collection.mutable.ArrayBuilder.make[Int]
    var bytes = 0L
    var seed = 0x2545F4914F6CDD1DL
    var tries = 0
    while (bytes < SampleTarget && tries < 4 * SampleTarget) {
      seed ^= seed << 13; seed ^= seed >>> 7; seed ^= seed << 17
      val i = java.lang.Long.remainderUnsigned(seed, n.toLong).toInt
      val l = offsets(i + 1) - offsets(i)
      if (l > 0) { picked += i; bytes += l }
      tries += 1
    }
    picked.result()
  }

  private def build(data: Array[Byte], offsets: Array[Int], n: Int): Table = {
    val strs = sample(offsets, n)
    var table = new Table
    var best = table
    var bestSize = Long.MaxValue
    val count1 = new Array[Int](512)
    val count2 = new Array[Int](512 * 512)
    for (frac <- Array(8, 38, 68, 98, 128)) {
      java.util.Arrays.fill(count1, 0)
      if (frac < 128) java.util.Arrays.fill(count2, 0)
      val size = countSample(table, data, offsets, strs, count1, if (frac < 128) count2 else null)
      if (size < bestSize) { bestSize = size; best = table }
      table = nextTable(table, count1, if (frac < 128) count2 else null, frac)
    }
    // The last table is measured too.
    java.util.Arrays.fill(count1, 0)
    val last = countSample(table, data, offsets, strs, count1, null)
    if (last < bestSize) best = table
    best
  }

  /** Compresses the sample with `t`, counting symbols and pairs; returns the compressed size. */
  private def countSample(t: Table, data: Array[Byte], offsets: Array[Int], strs: Array[Int],
      count1: Array[Int], count2: Array[Int]): Long = {
    var size = 0L
    var s = 0
    while (s < strs.length) {
      val i = strs(s)
      var p = offsets(i); val end = offsets(i + 1)
      var prev = -1
      while (p < end) {
        val c = t.longest(data, p, end)
        val l = t.len(c)
        count1(c) += 1
        // A multi-byte symbol could also have been its first byte alone: count that too.
        if (l > 1) count1(data(p) & 0xFF) += 1
        if (count2 != null && prev >= 0) {
          count2(prev * 512 + c) += 1
          if (l > 1) count2(prev * 512 + (data(p) & 0xFF)) += 1
        }
        size += (if (c < 256) 2 else 1)
        p += l; prev = c
      }
      s += 1
    }
    size
  }

  /** The best 255 symbols among the counted ones and the concatenations of counted pairs. */
  private def nextTable(t: Table, count1: Array[Int], count2: Array[Int], frac: Int): Table = {
    val cand = new java.util.HashMap[(Long, Int), java.lang.Long]()
    val minCount = 5L * frac / 128
    def offer(v: Long, l: Int, count: Long): Unit = if (count >= minCount && count > 0) {
      val k = (v, l)
      val g = count * l
      val old = cand.get(k)
      cand.put(k, if (old == null) g else old + g)
    }
    val codes = 256 + t.n
    var c1 = 0
    while (c1 < codes) {
      val n1 = count1(c1)
      if (n1 > 0) {
        val l1 = t.len(c1)
        // Single bytes are promoted: covering a byte avoids a two-byte escape.
        offer(t.value(c1), l1, if (l1 == 1) 8L * n1 else n1.toLong)
        if (count2 != null && l1 < 8) {
          var c2 = 0
          while (c2 < codes) {
            val n2 = count2(c1 * 512 + c2)
            if (n2 > 0) {
              val l = math.min(8, l1 + t.len(c2))
              val v = (t.value(c1) | (t.value(c2) << (8 * l1))) & mask(l)
              offer(v, l, n2.toLong)
            }
            c2 += 1
          }
        }
      }
      c1 += 1
    }
    val sorted = cand.entrySet().toArray(new Array[java.util.Map.Entry[(Long, Int), java.lang.Long]](0))
    // Highest gain first; ties broken by length then value so the table is reproducible.
    java.util.Arrays.sort(sorted, (a: java.util.Map.Entry[(Long, Int), java.lang.Long], b: java.util.Map.Entry[(Long, Int), java.lang.Long]) => {
      val g = java.lang.Long.compare(b.getValue, a.getValue)
      if (g != 0) g
      else {
        val l = Integer.compare(b.getKey._2, a.getKey._2)
        if (l != 0) l else java.lang.Long.compareUnsigned(a.getKey._1, b.getKey._1)
      }
    })
    val next = new Table
    var i = 0
    while (i < sorted.length && next.n < MaxSymbols) {
      val k = sorted(i).getKey
      next.add(k._1, k._2)
      i += 1
    }
    next
  }
}
