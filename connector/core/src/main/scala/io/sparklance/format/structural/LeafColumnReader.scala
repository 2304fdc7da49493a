package io.sparklance.format.structural

import io.sparklance.format.{FileContainer, LogicalType}
import io.sparklance.proto.EncodingsV21Protos.{PageLayout, RepDefLayer}
import io.sparklance.proto.File2Protos

import scala.jdk.CollectionConverters._

/**
 * Reads one leaf column over the scan's row range, page after page: only pages overlapping
 * the range are opened, each for the rows it contributes, and the open page keeps its decoded
 * chunk between batches so consecutive `read` calls continue where the last stopped.
 */
private[structural] final class LeafColumnReader(
    container: FileContainer,
    column: Int,
    fieldName: String,
    fieldId: Int,
    val layers: Layers,
    val batch: LeafBatch,
    isBool: Boolean,
    minor: Int,
    startRow0: Long,
    endRow0: Long
) {

  // Under fixed-size lists of structs the column's pages count level rows: itemsPerRow per row.
  private val perRow = layers.itemsPerRow
  private val startRow = startRow0 * perRow
  private val endRow = endRow0 * perRow
  private val meta = container.column(column)
  private val pages = meta.getPagesList.asScala.toArray
  private val pageStart: Array[Long] = pages.scanLeft(0L)(_ + _.getLength)
  private val columnRef = new PageRef(container.path, column, fieldName, fieldId, -1)
  columnRef.check(
    pageStart.last >= endRow,
    s"column pages hold ${pageStart.last} rows but rows up to $endRow were requested"
  )

  private var pageIdx = {
    var p = 0
    while (p < pages.length && pageStart(p + 1) <= startRow) p += 1
    p
  }
  private var decoder: PageDecoder = null
  private var left = 0L // rows of the open page still to read
  private var pos = startRow

  /** Reads the next `n` rows (n x itemsPerRow level rows). */
  def read(n: Int): Unit = {
    var need = n.toLong * perRow
    while (need > 0) {
      if (decoder == null || left == 0) guarded(open())
      val k = math.min(math.min(need, left), Int.MaxValue.toLong).toInt
      guarded(decoder.read(k, batch))
      batch.values match {
        case v: VarBuilder if v.utf8 =>
          val why = v.invalidUtf8()
          if (why != null)
            throw new PageRef(container.path, column, fieldName, fieldId, pageIdx - 1).corrupt(why)
        case _ =>
      }
      left -= k; need -= k; pos += k
    }
  }

  /**
   * Skips the next `n` rows: inside the open page the page decoder skips (a mini-block page
   * jumps to the chunk holding the target row); past it, the pages in between are never
   * opened and the next `read` opens the page holding the new position, from that row.
   */
  def skip(n: Int): Unit = {
    val k = n.toLong * perRow
    if (n < 0 || pos + k > endRow)
      throw new IllegalArgumentException(
        s"asked to skip $n rows of column $column of ${container.path} but only ${(endRow - pos) / perRow} remain"
      )
    if (decoder != null && k < left) {
      guarded(decoder.skip(k.toInt))
      left -= k
    } else {
      decoder = null
      left = 0
    }
    pos += k
  }

  /**
   * Decoders validate sizes before their loops; this is the net under them. Whatever a
   * corrupt page still manages to trip (an index past an array, an impossible allocation, a
   * protobuf that parsed into nonsense) surfaces as a corrupt-file error naming the page,
   * never as a raw runtime exception.
   */
  private def guarded[T](body: => T): T =
    try body
    catch {
      case e: io.sparklance.LanceException => throw e
      case e @ (_: IndexOutOfBoundsException | _: NegativeArraySizeException | _: ArithmeticException |
          _: IllegalArgumentException | _: IllegalStateException | _: NullPointerException |
          _: ClassCastException | _: java.nio.BufferUnderflowException | _: OutOfMemoryError) =>
        throw new PageRef(container.path, column, fieldName, fieldId, math.max(0, pageIdx - 1))
          .corrupt(s"page does not decode (${e.getClass.getSimpleName}: ${e.getMessage})", e)
    }

  private def open(): Unit = {
    while (pageIdx < pages.length && pageStart(pageIdx + 1) <= pos) pageIdx += 1
    columnRef.check(pageIdx < pages.length, s"no page holds row $pos")
    val p = pages(pageIdx)
    val ref = new PageRef(container.path, column, fieldName, fieldId, pageIdx)
    val from = pos - pageStart(pageIdx)
    val until = math.min(endRow, pageStart(pageIdx + 1)) - pageStart(pageIdx)
    decoder = PageDecoders.open(container, p, minor, layers, batch.values, isBool, from, until, ref)
    left = until - from
    pageIdx += 1
  }
}

private[structural] object PageDecoders {
  private val PageLayoutUrl = "lance.encodings21.PageLayout"

  def layout(p: File2Protos.ColumnMetadata.Page, ref: PageRef): PageLayout = {
    ref.check(p.hasEncoding && p.getEncoding.hasDirect, "page encoding is not a direct encoding")
    try {
      val any = com.google.protobuf.Any.parseFrom(p.getEncoding.getDirect.getEncoding)
      ref.check(
        any.getTypeUrl.endsWith(PageLayoutUrl),
        s"page encoding is ${any.getTypeUrl}, not a 2.1+ PageLayout"
      )
      PageLayout.parseFrom(any.getValue)
    } catch {
      case e: com.google.protobuf.InvalidProtocolBufferException =>
        throw ref.corrupt(s"page encoding does not decode: ${e.getMessage}", e)
    }
  }

  /** Page def levels before the first list layer: items at or below this own a value slot. */
  private def maxVisible(page: Array[RepDefLayer]): Int = {
    var s = 0; var j = 0; var stop = false
    while (j < page.length && !stop) {
      page(j) match {
        case RepDefLayer.REPDEF_ALL_VALID_ITEM =>
        case RepDefLayer.REPDEF_NULLABLE_ITEM => s += 1
        case _ => stop = true
      }
      j += 1
    }
    s
  }

  def open(
      container: FileContainer,
      p: File2Protos.ColumnMetadata.Page,
      minor: Int,
      layers: Layers,
      leafKind: ValuesBuilder,
      isBool: Boolean,
      from: Long,
      until: Long,
      ref: PageRef
  ): PageDecoder = {
    val l = layout(p, ref)
    ref.check(
      p.getBufferOffsetsCount == p.getBufferSizesCount,
      "page buffer offsets and sizes differ in count"
    )
    val io = new PageIO(
      container,
      p.getBufferOffsetsList.asScala.map(_.longValue).toArray,
      p.getBufferSizesList.asScala.map(_.longValue).toArray,
      ref
    )
    openLayout(l, io, p.getLength, minor, layers, leafKind, isBool, from, until, ref)
  }

  /** Opens page layout `l` (a page's own, or the inner layout of a blob page) over its buffers `io`. */
  def openLayout(
      l: PageLayout,
      io: PageIO,
      rows: Long,
      minor: Int,
      layers: Layers,
      leafKind: ValuesBuilder,
      isBool: Boolean,
      from: Long,
      until: Long,
      ref: PageRef
  ): PageDecoder = {
    def prep(ls: java.util.List[RepDefLayer]) = {
      val arr = ls.asScala.toArray
      (layers.pageDefMap(arr, ref), maxVisible(arr))
    }
    l.getLayoutCase match {
      case PageLayout.LayoutCase.MINI_BLOCK_LAYOUT =>
        val m = l.getMiniBlockLayout; val (dm, mv) = prep(m.getLayersList)
        new MiniBlockPage(io, m, minor, layers, dm, mv, rows, from, until, ref)
      case PageLayout.LayoutCase.FULL_ZIP_LAYOUT =>
        val f = l.getFullZipLayout; val (dm, mv) = prep(f.getLayersList)
        new FullZipPage(io, f, layers, dm, mv, rows, from, until, ref)
      case PageLayout.LayoutCase.CONSTANT_LAYOUT =>
        val c = l.getConstantLayout; val (dm, mv) = prep(c.getLayersList)
        new ConstantPage(io, c, layers, dm, mv, leafKind, isBool, rows, from, until, ref)
      case PageLayout.LayoutCase.BLOB_LAYOUT =>
        new BlobLayoutPage(l.getBlobLayout, io, rows, minor, layers, from, until, ref)
      case other => throw ref.unsupported(s"page layout $other (file format 2.3 or newer?)")
    }
  }
}
