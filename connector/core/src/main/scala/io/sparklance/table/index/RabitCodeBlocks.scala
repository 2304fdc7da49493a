package io.sparklance.table.index

/**
 * The packed layout of an IVF_RQ (RaBitQ) index's binary codes (`_rabit_codes` of
 * `auxiliary.idx`, when its storage metadata says `"packed":true`, as pylance 14 always
 * writes it), one IVF partition at a time: `n` rows of `len`-byte codes.
 *
 * The first `32 * (n / 32)` rows are in blocks of 32 rows, a block being `len` runs of 32
 * bytes, one per code byte `i`: bytes 0–15 of a run hold the low nibbles of the 32 rows' byte
 * `i`, bytes 16–31 their high nibbles; byte `j` of a half holds the nibble of row
 * `Perm(j)` in its low four bits and that of row `Perm(j) + 16` in its high four (the order
 * Lance's 4-bit lookup-table kernels read). The remaining `n % 32` rows follow transposed:
 * byte `i` of every remaining row, then byte `i + 1`, ….
 *
 * Every other column of the file is one value per row, in row order.
 */
object RabitCodeBlocks {
  private val Block = 32
  private val Perm = Array(0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15)

  /** The codes of `packed` (`n` rows of `len` bytes) row after row. */
  def unpack(packed: Array[Byte], n: Int, len: Int): Array[Byte] = {
    require(packed.length == n * len, s"${packed.length} bytes are not $n codes of $len")
    val out = new Array[Byte](n * len)
    val blocks = n / Block
    var b = 0
    while (b < blocks) {
      var i = 0
      while (i < len) {
        val at = (b * len + i) * Block
        var j = 0
        while (j < 16) {
          val lo = packed(at + j) & 0xff
          val hi = packed(at + j + 16) & 0xff
          val r0 = b * Block + Perm(j)
          out(r0 * len + i) = ((lo & 0xf) | ((hi & 0xf) << 4)).toByte
          out((r0 + 16) * len + i) = ((lo >>> 4) | ((hi >>> 4) << 4)).toByte
          j += 1
        }
        i += 1
      }
      b += 1
    }
    val done = blocks * Block
    val rest = n - done
    val base = done * len
    var i = 0
    while (i < len) {
      var r = 0
      while (r < rest) { out(base + r * len + i) = packed(base + i * rest + r); r += 1 }
      i += 1
    }
    out
  }

  /** `rows` (`n` codes of `len` bytes, row after row) in the packed layout. */
  def pack(rows: Array[Byte], n: Int, len: Int): Array[Byte] = {
    require(rows.length == n * len, s"${rows.length} bytes are not $n codes of $len")
    val out = new Array[Byte](n * len)
    val blocks = n / Block
    var b = 0
    while (b < blocks) {
      var i = 0
      while (i < len) {
        val at = (b * len + i) * Block
        var j = 0
        while (j < 16) {
          val r0 = b * Block + Perm(j)
          val c0 = rows(r0 * len + i) & 0xff
          val c1 = rows((r0 + 16) * len + i) & 0xff
          out(at + j) = ((c0 & 0xf) | ((c1 & 0xf) << 4)).toByte
          out(at + j + 16) = ((c0 >>> 4) | ((c1 >>> 4) << 4)).toByte
          j += 1
        }
        i += 1
      }
      b += 1
    }
    val done = blocks * Block
    val rest = n - done
    val base = done * len
    var i = 0
    while (i < len) {
      var r = 0
      while (r < rest) { out(base + i * rest + r) = rows(base + r * len + i); r += 1 }
      i += 1
    }
    out
  }

  /** The packed codes of the rows `keep` (ascending) of the packed partition `packed`. */
  def take(packed: Array[Byte], n: Int, len: Int, keep: Array[Int]): Array[Byte] = {
    val rows = unpack(packed, n, len)
    val kept = new Array[Byte](keep.length * len)
    var r = 0
    while (r < keep.length) {
      System.arraycopy(rows, keep(r) * len, kept, r * len, len)
      r += 1
    }
    pack(kept, keep.length, len)
  }
}
