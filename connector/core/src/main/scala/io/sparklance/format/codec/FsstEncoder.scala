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

  /** Each byte pair's first byte as an escape: the lookups of a table without symbols. */
  private val LowBytes: Array[Char] = Array.tabulate(65536)(p => info(p & 0xff, 1))

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
    val byteCode: Array[Int] = new Array[Int](256)

    /**
     * For each little-endian byte pair, the [[info]] of its two-byte symbol, else of its
     * first byte: one lookup answers for both. Filled by [[finish]]; `pairs` marks the byte
     * pairs taken by a symbol while the table is built.
     */
    val pairInfo: Array[Char] = new Array[Char](65536)
    private val pairs = new java.util.BitSet(65536)
    private var finished = false

    /** Code of the symbol of 3+ bytes whose first three bytes hash here, or -1. */
    private val longCode: Array[Int] = new Array[Int](HashSize)

    /**
     * Per hash slot `h`, the value of its symbol of 3+ bytes at `2h`, and at `2h + 1` the
     * symbol's [[info]] shifted up by 8 over the number of bits its value leaves unused
     * (`8 * (8 - len)`): side by side, one hash reaches both in one cache line, and the low
     * byte is the shift of the mask that keeps the symbol's bytes of a word (a long shift
     * uses the low 6 bits of its count only, so the word serves as the count unmasked). An
     * empty slot holds a value with bits above any 3-byte mask and a length of 3, so it never
     * matches. Filled by [[finish]].
     */
    private val slots = new Array[Long](2 * HashSize)
    locally {
      java.util.Arrays.fill(longCode, -1)
      var b = 0
      while (b < 256) {
        byteCode(b) = b; value(b) = b.toLong; len(b) = 1; b += 1
      }
    }

    def add(v: Long, l: Int): Boolean = {
      require(!finished, "symbol added to a finished table")
      if (n >= MaxSymbols) return false
      val code = 256 + n
      l match {
        case 1 => val b = (v & 0xff).toInt; if (byteCode(b) >= 256) return false; byteCode(b) = code
        case 2 =>
          val p = (v & 0xffff).toInt
          if (pairs.get(p)) return false
          pairs.set(p)
        case _ => val h = hash3(v); if (longCode(h) >= 0) return false; longCode(h) = code
      }
      value(code) = v; len(code) = l; n += 1
      true
    }

    /** Ends construction: the table is used for lookups only from now on. */
    def finish(): Table = {
      if (!finished) {
        System.arraycopy(LowBytes, 0, pairInfo, 0, 65536) // escapes, then the symbols
        var c = 256
        while (c < 256 + n) {
          val v = value(c).toInt
          if (len(c) == 1) {
            var hi = 0
            while (hi < 65536) { pairInfo(hi | v) = info(c, 1); hi += 256 }
          }
          c += 1
        }
        c = 256
        while (c < 256 + n) { if (len(c) == 2) pairInfo(value(c).toInt) = info(c, 2); c += 1 }
        var h = 0
        while (h < HashSize) {
          val code = longCode(h)
          val l = if (code >= 0) len(code) else 3
          slots(2 * h) = if (code >= 0) value(code) else -1L
          slots(2 * h + 1) = (info(math.max(code, 0), l).toLong << 8) | ((8 - l) << 3)
          h += 1
        }
        finished = true
      }
      this
    }

    /**
     * Longest symbol at `p` of `a` (string ends at `end`): its [[info]].
     * Which symbol wins depends on the data, so the choice is made without branches, and the
     * chain from one position to the next has a single table load after the hash.
     */
    @inline def longest(a: Array[Byte], p: Int, end: Int): Int = {
      val rem = end - p
      if (rem >= 3) {
        // One load serves the long and pair lookups; bytes past the string's end are not
        // masked off, as a symbol longer than what is left misses anyway.
        val w =
          if (p + 8 <= a.length) LittleEndian.i64(a, p) else LittleEndian.loadPartial(a, p, rem)
        val h = 2 * hash3(w)
        val icl = slots(h + 1)
        val li = (icl >>> 8).toInt
        val l = li >>> 9
        val x = (w & (-1L >>> icl)) ^ slots(h)
        val miss = ((x | -x) >>> 63).toInt | ((rem - l) >>> 31)
        val pi = pairInfo((w & 0xffff).toInt).toInt
        pi + ((li - pi) & (miss - 1))
      } else if (rem == 2) pairInfo((a(p) & 0xff) | ((a(p + 1) & 0xff) << 8))
      else info(byteCode(a(p) & 0xff), 1)
    }
  }

  /**
   * What compression needs of a code (0..255 a byte, else symbol `code - 256`) in one number:
   * the byte it writes (its symbol's number, or the escape), then a bit set for an escape,
   * then its length from bit 9. An escape writes the byte at hand after it.
   */
  @inline private def info(code: Int, len: Int): Char =
    ((if (code < 256) 256 | Esc else code - 256) | (len << 9)).toChar

  /** The code of [[info]] `got` found at `p` of `data`. */
  @inline private def codeOf(got: Int, data: Array[Byte], p: Int): Int =
    if ((got & 256) != 0) data(p) & 0xff else 256 + (got & 255)

  @inline private def mask(l: Int): Long = if (l >= 8) -1L else (1L << (8 * l)) - 1

  /** Slot of the first three bytes of `w`: bits of their product with a prime. */
  @inline private def hash3(w: Long): Int =
    (((w & 0xffffffL) * 2971215073L >>> 16) & (HashSize - 1)).toInt

  /**
   * Compresses strings `data[offsets(i), offsets(i+1))` for `i < n` (offsets relative to
   * `data`, `offsets(0)` may be non-zero). Returns codes with offsets starting at 0.
   *
   * Each symbol's lookup depends on where the previous one ended, so one string is a chain of
   * dependent loads. The strings are split in two halves of about equal bytes, encoded side by
   * side (the second into the upper part of the buffer), so the processor overlaps the two
   * chains; the second half's codes are moved down after the first's at the end. A half's
   * codes take at most two bytes per byte, so neither overruns its part.
   *
   * `scratch`, when given, is where the codes go if it holds twice the strings' bytes (else
   * a new array does), and the codes are left untrimmed: the first `codeBytes` of `codes`,
   * whose array the caller may pass again for its next page. Null: codes of exact size.
   */
  def compress(
      data: Array[Byte],
      offsets: Array[Int],
      n: Int,
      scratch: Array[Byte] = null
  ): Compressed = {
    val t = build(data, offsets, n)
    val base = offsets(0)
    val total = offsets(n) - base
    val room = math.max(16, 2 * total)
    val out = if (scratch != null && scratch.length >= room) scratch else new Array[Byte](room)
    val outOff = new Array[Int](n + 1)
    val mid = middle(offsets, n)
    val upper = 2 * (offsets(mid) - base) // the first half's codes end below this
    val a = new Half(offsets, 0, mid, 0)
    val b = new Half(offsets, mid, n, upper)
    while (a.live && b.live) { a.step(t, data, out, outOff); b.step(t, data, out, outOff) }
    // The half with strings left finishes alone.
    a.finish(t, data, out, outOff)
    b.finish(t, data, out, outOff)
    val oa = a.o
    val ob = b.o
    // The second half's codes follow the first's.
    System.arraycopy(out, upper, out, oa, ob - upper)
    var i = mid + 1
    while (i <= n) { outOff(i) -= upper - oa; i += 1 }
    new Compressed(
      serialize(t),
      outOff,
      if (scratch != null) out else java.util.Arrays.copyOf(out, outOff(n))
    )
  }

  /**
   * The cursor of one half: strings `[i, until)` left, at `p` of string `i` (which ends at
   * `end`), its codes written up to `o`. The strings lie back to back, so the cursor moves on
   * to the next string as it is; each string's end offset goes to `outOff`.
   */
  private final class Half(offsets: Array[Int], var i: Int, until: Int, var o: Int) {
    var p: Int = offsets(i)
    var end: Int = offsets(math.min(i + 1, until))
    def live: Boolean = i < until

    /** One code of the current string, or the move to the next string. */
    @inline def step(t: Table, data: Array[Byte], out: Array[Byte], outOff: Array[Int]): Unit =
      if (p < end) {
        val got = t.longest(data, p, end)
        o = put(got, data, p, out, o); p += got >>> 9
      } else {
        i += 1; outOff(i) = o
        if (i < until) end = offsets(i + 1)
      }

    /** The strings left, alone. */
    def finish(t: Table, data: Array[Byte], out: Array[Byte], outOff: Array[Int]): Unit =
      while (i < until) {
        o = encode(t, data, p, offsets(i + 1), out, o); i += 1; outOff(i) = o; p = offsets(i)
      }
  }

  /** Codes of `data[from, end)` written to `out` from `at`; returns where they end. */
  private def encode(
      t: Table,
      data: Array[Byte],
      from: Int,
      end: Int,
      out: Array[Byte],
      at: Int
  ): Int = {
    var p = from
    var o = at
    while (p < end) {
      val got = t.longest(data, p, end)
      o = put(got, data, p, out, o); p += got >>> 9
    }
    o
  }

  /**
   * Writes the code of [[info]] `got` found at `p` to `out` at `o`; returns where the next
   * goes. The byte at `p` is written after the code always and kept only after an escape, so
   * there is no branch on which kind the code is (there is room: at least one input byte is
   * left for it).
   */
  @inline private def put(got: Int, data: Array[Byte], p: Int, out: Array[Byte], o: Int): Int = {
    out(o) = got.toByte; out(o + 1) = data(p)
    o + 1 + ((got >>> 8) & 1)
  }

  /** The first string of the second half: the halves hold about equal bytes. */
  private def middle(offsets: Array[Int], n: Int): Int = {
    val half = offsets(0) + (offsets(n) - offsets(0)) / 2
    var lo = 0
    var hi = n
    while (lo < hi) {
      val m = (lo + hi) >>> 1
      if (offsets(m) < half) lo = m + 1 else hi = m
    }
    lo
  }

  private def serialize(t: Table): Array[Byte] = {
    val out = new Array[Byte](TableBytes)
    // Header: magic, encoder switch on, suffix limit and terminator (unused by decoders), count.
    LittleEndian.putI64(out, 0, (Magic << 32) | (1L << 24) | (t.n.toLong & 0xff))
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
    var seed = 0x2545f4914f6cdd1dL
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
    var table = new Table().finish()
    var best = table
    var bestSize = Long.MaxValue
    val count1 = new Array[Int](512)
    val count2 = new PairCounts
    for (frac <- Array(8, 38, 68, 98, 128)) {
      java.util.Arrays.fill(count1, 0)
      count2.clear()
      val pairs = if (frac < 128) count2 else null
      val size = countSample(table, data, offsets, strs, count1, pairs)
      if (size < bestSize) { bestSize = size; best = table }
      table = nextTable(table, count1, pairs, frac)
    }
    // The last table is measured too.
    java.util.Arrays.fill(count1, 0)
    val last = countSample(table, data, offsets, strs, count1, null)
    if (last < bestSize) best = table
    best
  }

  /** Counts of adjacent code pairs (`first * 512 + second`), cleared by the entries touched. */
  private final class PairCounts {
    val counts = new Array[Int](512 * 512)
    var touched = new Array[Int](1024)
    var size = 0
    @inline def inc(k: Int): Unit = {
      if (counts(k) == 0) {
        if (size == touched.length) touched = java.util.Arrays.copyOf(touched, size * 2)
        touched(size) = k; size += 1
      }
      counts(k) += 1
    }
    def clear(): Unit = {
      var i = 0
      while (i < size) { counts(touched(i)) = 0; i += 1 }
      size = 0
    }
  }

  /** Compresses the sample with `t`, counting symbols and pairs; returns the compressed size. */
  private def countSample(
      t: Table,
      data: Array[Byte],
      offsets: Array[Int],
      strs: Array[Int],
      count1: Array[Int],
      count2: PairCounts
  ): Long = {
    var size = 0L
    var s = 0
    while (s < strs.length) {
      val i = strs(s)
      var p = offsets(i); val end = offsets(i + 1)
      var prev = -1
      while (p < end) {
        val got = t.longest(data, p, end)
        val c = codeOf(got, data, p)
        val l = got >>> 9
        count1(c) += 1
        // A multi-byte symbol could also have been its first byte alone: count that too.
        if (l > 1) count1(data(p) & 0xff) += 1
        if (count2 != null && prev >= 0) {
          count2.inc(prev * 512 + c)
          if (l > 1) count2.inc(prev * 512 + (data(p) & 0xff))
        }
        size += 1 + ((got >>> 8) & 1)
        p += l; prev = c
      }
      s += 1
    }
    size
  }

  /**
   * The best 255 symbols among the counted ones and the concatenations of counted pairs:
   * candidates by gain, highest first, ties broken by length then value (so the table is
   * reproducible), each taken unless its lookup slot is already held.
   */
  private def nextTable(t: Table, count1: Array[Int], count2: PairCounts, frac: Int): Table = {
    val cand = new Candidates(2 * (512 + (if (count2 == null) 0 else count2.size)))
    val minCount = 5L * frac / 128
    @inline def offer(v: Long, l: Int, count: Long): Unit =
      if (count >= minCount && count > 0) cand.add(v, l, count * l)
    val codes = 256 + t.n
    var c1 = 0
    while (c1 < codes) {
      val n1 = count1(c1)
      if (n1 > 0) {
        val l1 = t.len(c1)
        // Single bytes are promoted: covering a byte avoids a two-byte escape.
        offer(t.value(c1), l1, if (l1 == 1) 8L * n1 else n1.toLong)
      }
      c1 += 1
    }
    if (count2 != null) {
      var k = 0
      while (k < count2.size) {
        val pair = count2.touched(k)
        val a = pair >>> 9; val b = pair & 511
        val l1 = t.len(a)
        if (l1 < 8) {
          val l = math.min(8, l1 + t.len(b))
          offer((t.value(a) | (t.value(b) << (8 * l1))) & mask(l), l, count2.counts(pair).toLong)
        }
        k += 1
      }
    }
    val next = new Table
    cand.inOrder { (v, l) => next.add(v, l); next.n < MaxSymbols }
    next.finish()
  }

  /** Candidate symbols (value, length) with summed gains, in a map of primitive arrays. */
  private final class Candidates(expected: Int) {
    private val cap = Integer.highestOneBit(math.max(16, expected) * 2)
    private val slot = new Array[Int](cap)
    java.util.Arrays.fill(slot, -1)
    private val values = new Array[Long](cap)
    private val lens = new Array[Int](cap)
    private val gains = new Array[Long](cap)
    private var n = 0

    def add(v: Long, l: Int, gain: Long): Unit = {
      var h = ((v * 0x9e3779b97f4a7c15L) ^ l).toInt
      h ^= h >>> 16
      var s = h & (cap - 1)
      while (slot(s) >= 0) {
        val i = slot(s)
        if (values(i) == v && lens(i) == l) { gains(i) += gain; return }
        s = (s + 1) & (cap - 1)
      }
      slot(s) = n; values(n) = v; lens(n) = l; gains(n) = gain; n += 1
    }

    /** Whether candidate `i` comes before `j`: higher gain, then longer, then smaller value. */
    private def before(i: Int, j: Int): Boolean =
      if (gains(i) != gains(j)) gains(i) > gains(j)
      else if (lens(i) != lens(j)) lens(i) > lens(j)
      else java.lang.Long.compareUnsigned(values(i), values(j)) < 0

    /** Calls `f` with candidates in order while it returns true (a heap: most are never needed). */
    def inOrder(f: (Long, Int) => Boolean): Unit = {
      val heap = Array.range(0, n)
      var size = n
      def down(at: Int): Unit = {
        var i = at
        var done = false
        while (!done) {
          val l = 2 * i + 1
          if (l >= size) done = true
          else {
            val c = if (l + 1 < size && before(heap(l + 1), heap(l))) l + 1 else l
            if (before(heap(c), heap(i))) {
              val x = heap(c); heap(c) = heap(i); heap(i) = x; i = c
            } else done = true
          }
        }
      }
      var k = size / 2 - 1
      while (k >= 0) { down(k); k -= 1 }
      var more = true
      while (more && size > 0) {
        val top = heap(0)
        size -= 1
        heap(0) = heap(size)
        down(0)
        more = f(values(top), lens(top))
      }
    }
  }
}
