package io.sparklance.format.v20

import io.sparklance.format.{FileContainer, PageContext}
import io.sparklance.proto.{EncodingsV20Protos, File2Protos}

/**
 * The pages of one 2.0 column: their row ranges (pages cover consecutive rows, in order), their
 * encodings (a `google.protobuf.Any` wrapping an `ArrayEncoding`, unwrapped once per page on
 * first use) and their buffers. Nothing here reads page data until a page is decoded.
 */
final class ColumnPages(val container: FileContainer, val column: Int, baseCtx: PageContext) {
  private val meta: File2Protos.ColumnMetadata = container.column(column)
  val numPages: Int = meta.getPagesCount

  /** starts(p) is the first row of page p; starts(numPages) the column's row count. */
  val starts: Array[Long] = {
    val s = new Array[Long](numPages + 1)
    var p = 0
    while (p < numPages) {
      val len = meta.getPages(p).getLength
      if (len < 0 || len > Int.MaxValue)
        throw baseCtx.withPage(p).corrupt(s"page length $len is out of range")
      s(p + 1) = s(p) + len
      p += 1
    }
    s
  }

  def numRows: Long = starts(numPages)
  def pageLength(p: Int): Int = (starts(p + 1) - starts(p)).toInt
  def ctx(p: Int): PageContext = baseCtx.withPage(p)

  /** The page holding `row` (the first such page, skipping empty ones); numPages when row == numRows. */
  def pageOf(row: Long): Int = {
    if (row >= numRows) return numPages
    // Largest p with starts(p) <= row, then skip forward past empty pages.
    var lo = 0
    var hi = numPages - 1
    while (lo < hi) {
      val mid = (lo + hi + 1) >>> 1
      if (starts(mid) <= row) lo = mid else hi = mid - 1
    }
    var p = lo
    while (p < numPages && starts(p + 1) <= row) p += 1
    p
  }

  private val encodings = new Array[EncodingsV20Protos.ArrayEncoding](numPages)

  def encoding(p: Int): EncodingsV20Protos.ArrayEncoding = {
    var e = encodings(p)
    if (e == null) {
      e = EncodingUnwrap.arrayEncoding(meta.getPages(p).getEncoding, ctx(p), container)
      encodings(p) = e
    }
    e
  }

  def buffers(p: Int): PageBuffers = {
    val page = meta.getPages(p)
    val c = ctx(p)
    c.check(
      page.getBufferOffsetsCount == page.getBufferSizesCount,
      s"page has ${page.getBufferOffsetsCount} buffer offsets but ${page.getBufferSizesCount} sizes"
    )
    c.check(
      meta.getBufferOffsetsCount == meta.getBufferSizesCount,
      s"column has ${meta.getBufferOffsetsCount} buffer offsets but ${meta.getBufferSizesCount} sizes"
    )
    def longs(n: Int, f: Int => Long) = Array.tabulate(n)(f)
    new PageBuffers(
      c,
      container,
      longs(page.getBufferOffsetsCount, page.getBufferOffsets),
      longs(page.getBufferSizesCount, page.getBufferSizes),
      longs(meta.getBufferOffsetsCount, meta.getBufferOffsets),
      longs(meta.getBufferSizesCount, meta.getBufferSizes)
    )
  }
}
