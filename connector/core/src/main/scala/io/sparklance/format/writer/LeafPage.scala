package io.sparklance.format.writer

import io.sparklance.format.ColumnArray
import io.sparklance.proto.EncodingsV21Protos.PageLayout

/**
 * What the page encoders ([[MiniBlockEncoder]], [[FullZipEncoder]]) read of one buffered page:
 * the leaf's structure, its canonical levels and values, and where the finished page goes.
 * A plain leaf column is its own page source; a blob column hands the encoders a page of its
 * descriptors instead (see [[BlobColumnWriters]]).
 */
private[writer] trait LeafPage {
  def leafPath: LeafPath

  /** Repetition levels of the page, or null when the leaf has none. */
  def repLevels: Array[Short]

  /** Canonical definition levels (see [[LeafPath]]), or null when the leaf has none. */
  def canonicalDefs: Array[Short]
  def levelCount: Int
  def pageValues: LeafValues
  def pageRows: Long

  /** 2.2 and later: 32-bit chunk sizes, compressed levels. */
  def isLarge: Boolean
  def fileVersion: FileVersion
  def emit(buffers: Seq[ByteBuf], layout: PageLayout): Unit

  /**
   * An empty buffer of at least `bytes` for the page's data, which [[emit]] writes out: the
   * same buffer for each page of a column, so pages are not assembled in a new one each time.
   * Valid until the next call.
   */
  def pageBuffer(bytes: Int): ByteBuf = new ByteBuf(bytes)
}

/** Writes one column of a 2.1/2.2 file from whole top-level rows. */
private[writer] trait LeafColumnWriter {
  def append(top: ColumnArray): Unit
  def finish(): Unit
}
