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
  def unpack(packed: Array[Byte], n: Int, len: Int): Array[Byte] =
    convert(packed, n, len, pack = false)

  /** `rows` (`n` codes of `len` bytes, row after row) in the packed layout. */
  def pack(rows: Array[Byte], n: Int, len: Int): Array[Byte] = convert(rows, n, len, pack = true)

  /**
   * Packs or unpacks. Either way a block's byte pair (rows `Perm(j)` and `Perm(j) + 16` of a
   * code byte, or bytes `j` and `j + 16` of its run) becomes the other pair by the same swap of
   * nibbles: the first byte gets both low nibbles, the second both high ones.
   */
  private def convert(in: Array[Byte], n: Int, len: Int, pack: Boolean): Array[Byte] = {
    require(in.length == n * len, s"${in.length} bytes are not $n codes of $len")
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
          val row0 = r0 * len + i
          val row1 = row0 + 16 * len
          val x = in(if (pack) row0 else at + j) & 0xff
          val y = in(if (pack) row1 else at + j + 16) & 0xff
          out(if (pack) at + j else row0) = ((x & 0xf) | ((y & 0xf) << 4)).toByte
          out(if (pack) at + j + 16 else row1) = ((x >>> 4) | ((y >>> 4) << 4)).toByte
          j += 1
        }
        i += 1
      }
      b += 1
    }
    val base = blocks * Block * len
    val rest = n - blocks * Block
    var i = 0
    while (i < len) {
      var r = 0
      while (r < rest) {
        val row = base + r * len + i
        val column = base + i * rest + r
        if (pack) out(column) = in(row) else out(row) = in(column)
        r += 1
      }
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
