package io.sparklance.format.codec

import io.sparklance.LanceErrors

/**
 * FSST string decompression with Lance's serialized symbol table (crate `fsst`):
 * a u64 LE header ("FSST" << 32 | encoder_switch << 24 | ... | n_symbols), then n 8-byte
 * symbols, then n length bytes (2312 bytes in all when written by Lance). Code 255 escapes a
 * literal byte; code c < 255 emits symbol c's first len(c) bytes. When the switch bit is off
 * the "compressed" bytes are the raw strings.
 */
object Fsst {
  private final val Esc = 255
  private final val Magic = 0x46535354L

  final class Table(val enabled: Boolean, val symbols: Array[Long], val lens: Array[Byte]) {
    val count: Int = lens.length
  }

  def parseTable(t: Array[Byte], what: => String = "FSST symbol table"): Table = {
    if (t.length < 8) throw LanceErrors.corruptFile(
      what,
      s"FSST symbol table has ${t.length} bytes, fewer than its header"
    )
    val header = LittleEndian.i64(t, 0)
    if ((header >>> 32) != Magic)
      throw LanceErrors.corruptFile(what, "FSST symbol table has no FSST magic")
    val enabled = (header & (1L << 24)) != 0
    val n = (header & 0xff).toInt
    if (t.length < 8 + 9 * n) throw LanceErrors.corruptFile(
      what,
      s"FSST symbol table of ${t.length} bytes cannot hold $n symbols"
    )
    val symbols = new Array[Long](n)
    val lens = new Array[Byte](n)
    var i = 0
    while (i < n) {
      symbols(i) = LittleEndian.i64(t, 8 + 8 * i)
      val l = t(8 + 8 * n + i)
      if (l < 1 || l > 8)
        throw LanceErrors.corruptFile(what, s"FSST symbol $i has length $l (must be 1..8)")
      lens(i) = l
      i += 1
    }
    new Table(enabled, symbols, lens)
  }

  /**
   * Decompresses `n` values whose compressed bytes are `codes[offsets(i), offsets(i+1))`.
   * Returns (offsets of n+1 entries starting at 0, data of exactly the last offset's bytes).
   */
  def decompress(
      symbolTable: Array[Byte],
      codes: Array[Byte],
      offsets: Array[Int],
      n: Int
  ): (Array[Int], Array[Byte]) = {
    val (o, d) = decompress(parseTable(symbolTable), codes, offsets, 0, n, "FSST data")
    (o, if (o(n) == d.length) d else java.util.Arrays.copyOf(d, o(n)))
  }

  /**
   * Decompresses `n` values whose compressed bytes are `codes[offsets(offOff + i),
   * offsets(offOff + i + 1))`. Returns (offsets of n+1 entries starting at 0, data), where
   * data may hold more bytes than the last offset.
   */
  def decompress(
      table: Table,
      codes: Array[Byte],
      offsets: Array[Int],
      offOff: Int,
      n: Int,
      what: => String
  ): (Array[Int], Array[Byte]) = {
    if (n < 0 || offOff < 0 || offsets.length < offOff + n + 1) {
      throw LanceErrors.corruptFile(
        what,
        s"FSST offsets hold ${offsets.length - offOff} entries for $n values"
      )
    }
    val first = offsets(offOff); val last = offsets(offOff + n)
    if (first < 0 || last > codes.length || first > last) {
      throw LanceErrors.corruptFile(
        what,
        s"FSST offsets [$first, $last) fall outside ${codes.length} code bytes"
      )
    }
    val outOffsets = new Array[Int](n + 1)
    if (!table.enabled) {
      var i = 0
      while (i <= n) { outOffsets(i) = offsets(offOff + i) - first; i += 1 }
      checkMonotone(outOffsets, what)
      return (outOffsets, java.util.Arrays.copyOfRange(codes, first, last))
    }
    // A code emits at most 8 bytes, and each symbol is written as 8 bytes: a value of k code
    // bytes needs 8k bytes of room. Text compresses about 3x (TPC-H comments 2.9x); the
    // buffer grows when a value may not fit.
    var out = new Array[Byte](capacity(0, (last - first).toLong * 4 + 64, what))
    var o = 0
    val syms = table.symbols; val lens = table.lens; val nsym = table.count
    var i = 0
    while (i < n) {
      var p = offsets(offOff + i); val end = offsets(offOff + i + 1)
      if (end < p || end > last) {
        throw LanceErrors.corruptFile(what, s"FSST offset $end of value $i is out of order")
      }
      val room = o + (end - p).toLong * 8
      if (room > out.length) {
        out = java.util.Arrays.copyOf(out, capacity(out.length, room, what))
      }
      while (p < end) {
        val c = codes(p) & 0xff
        if (c < nsym) {
          LittleEndian.putI64(out, o, syms(c))
          o += lens(c); p += 1
        } else if (c == Esc) {
          if (p + 1 >= end) {
            throw LanceErrors.corruptFile(what, s"FSST escape at the end of value $i")
          }
          out(o) = codes(p + 1); o += 1; p += 2
        } else {
          throw LanceErrors.corruptFile(what, s"FSST code $c but the table has $nsym symbols")
        }
      }
      outOffsets(i + 1) = o
      i += 1
    }
    (outOffsets, out)
  }

  /** A buffer length of at least `need` bytes, at least double `current`. */
  private def capacity(current: Int, need: Long, what: => String): Int = {
    val limit = Int.MaxValue - 16
    if (need > limit) throw LanceErrors.corruptFile(what, "FSST data too large")
    math.min(limit.toLong, math.max(need, current.toLong * 2)).toInt
  }

  private def checkMonotone(o: Array[Int], what: => String): Unit = {
    var i = 1
    while (i < o.length) {
      if (o(i) < o(i - 1)) throw LanceErrors.corruptFile(what, "FSST offsets decrease"); i += 1
    }
  }
}
