package io.sparklance.format

/** Sequential decoding of some fields over a row range of one file. */
trait FileScan extends AutoCloseable {

  /**
   * Decodes the next `n` rows of every requested field, in request order. Callers never ask
   * past the end of the range they opened.
   */
  def next(n: Int): Array[ColumnArray]

  /**
   * As [[next]], for a caller done with the arrays before its next call to this scan: they
   * may share the scan's own buffers, which that call overwrites, so no batch is copied out
   * of them. The default is [[next]].
   */
  def nextShared(n: Int): Array[ColumnArray] = next(n)

  /** Advances past the next `n` rows without returning them; the default decodes and drops. */
  def skip(n: Int): Unit = next(n)
}
