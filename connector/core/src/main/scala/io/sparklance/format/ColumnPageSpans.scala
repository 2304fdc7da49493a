package io.sparklance.format

/**
 * The pages of one column, for planning splits: page p holds rows `[rowStarts(p),
 * rowStarts(p + 1))` of the file and occupies `bytes(p)` bytes (its buffers). `column` is the
 * column index, or -1 when the pages are row groups shared by every column (legacy files).
 */
final case class ColumnPageSpans(column: Int, rowStarts: Array[Long], bytes: Array[Long]) {
  def numPages: Int = bytes.length
  def totalBytes: Long = bytes.sum

  /** Mean bytes of a page; what decoding one page twice costs. */
  def meanPageBytes: Double = if (numPages == 0) 0.0 else totalBytes.toDouble / numPages
}
