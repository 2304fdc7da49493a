package io.sparklance.format.writer

/**
 * Working arrays a column's page encoders reuse from page to page, and from file to file
 * when a writer takes over a finished one's buffers: what would otherwise be allocated (and
 * zeroed) anew for every page.
 */
private[writer] final class PageScratch {

  /** FSST's code buffer: twice the largest page's string bytes so far (empty before). */
  var fsstCodes: Array[Byte] = Array.emptyByteArray

  /** Bytes held (what keeping this costs). */
  def capacity: Long = fsstCodes.length.toLong
}
