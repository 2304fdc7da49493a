package io.sparklance.format.v20

import scala.collection.mutable.ArrayBuffer

import io.sparklance.format._
import io.sparklance.proto.EncodingsV20Protos.ArrayEncoding.ArrayEncodingCase

/**
 * Sequential reader of one (possibly nested) field of a 2.0 file. `seek` positions it before
 * the first `next`, and again forward to skip rows; `next(n)` then returns the following `n`
 * rows, crossing page boundaries as needed.
 */
sealed abstract class FieldReader {
  def seek(row: Long): Unit
  def next(n: Int): ColumnArray
}

/** A field the file does not hold: all nulls. */
final class MissingFieldReader extends FieldReader {
  def seek(row: Long): Unit = ()
  def next(n: Int): ColumnArray = new NullArray(n)
}

/**
 * A leaf column (primitive, string, fixed-size list, packed struct). Decodes one page at a
 * time and keeps it while the scan moves through it; a batch inside one page is a slice of
 * it (the page itself when the batch is exactly the page), a batch across pages a concatenation.
 *
 * Wide fixed-width values (vectors) in uncompressed pages are read batch by batch instead: each
 * batch reads exactly its rows' bytes into the array it returns, so a row's bytes are copied
 * once, by the read, before the Spark layer's bulk copy, and no page-sized array is allocated.
 *
 * `keepStringDictionary` (top-level string and binary columns): dictionary pages decode to
 * [[DictionaryArray]]s, which batches slice and concatenate without resolving the ids.
 */
final class LeafFieldReader(
    pages: ColumnPages,
    shape: ValueShape,
    oneBasedDictionary: Boolean,
    packedChildPositions: Array[Int] = null,
    batchWindowMinBytes: Long = LeafFieldReader.BatchWindowMinBytes,
    keepStringDictionary: Boolean = false,
    utf8: Boolean = false
) extends FieldReader {
  private var pageIdx = 0
  private var page: ColumnArray = null

  /** Row of the current page that `page(0)` holds: `page` may be a window of the page's rows. */
  private var pageOff = 0
  private var pos = 0

  /** The first row (of the column) the scan will not ask for; pages are decoded only up to it where the encoding allows. */
  private var limit = Long.MaxValue

  /** Tells the reader that no row at or after `end` will be asked for. */
  def limitTo(end: Long): Unit = limit = end

  /** Bytes of one row when every row has the same size (fixed width, fixed-size lists of it), else 0. */
  private val rowBytes: Long = {
    def of(s: ValueShape): Long = s match {
      case ValueShape.Fixed(w, false) => w.toLong
      case ValueShape.FixedList(d, inner) => d.toLong * of(inner)
      case _ => 0L
    }
    of(shape)
  }

  def seek(row: Long): Unit = {
    val p = pages.pageOf(row)
    pos = if (p < pages.numPages) (row - pages.starts(p)).toInt else 0
    if (p != pageIdx || page == null || pos < pageOff || pos > pageOff + page.length) {
      page = null; pageIdx = p
    }
  }

  def next(n: Int): ColumnArray = {
    if (n == 0) return ColumnArrays.empty(shape)
    var remaining = n
    var parts: ArrayBuffer[ColumnArray] = null
    var single: ColumnArray = null
    while (remaining > 0) {
      if (pageIdx >= pages.numPages)
        throw pages.ctx(pageIdx).corrupt(
          s"column has only ${pages.numRows} rows, fewer than the rows asked for"
        )
      if (page == null) load(pageIdx, remaining)
      val avail = pageOff + page.length - pos
      if (avail == 0) {
        if (pos >= pages.pageLength(pageIdx)) { pageIdx += 1; pos = 0 }
        page = null
      } else {
        val take = math.min(avail, remaining)
        val part = ColumnArrays.slice(page, pos - pageOff, take)
        pos += take
        remaining -= take
        if (single == null && parts == null) single = part
        else {
          if (parts == null) { parts = new ArrayBuffer[ColumnArray](); parts += single }
          parts += part
        }
        if (pos == pageOff + page.length) {
          if (pos >= pages.pageLength(pageIdx)) { pageIdx += 1; pos = 0 }
          page = null
        }
      }
    }
    if (parts == null) single else ColumnArrays.concat(parts.toSeq)
  }

  /**
   * Decodes page p from row `pos` on: only up to `limit` when its encoding can read part of a
   * page, else whole; only the `want` rows of the current batch when the batch's bytes are many
   * and the encoding reads a window's bytes alone.
   */
  private def load(p: Int, want: Int): Unit = {
    val len = pages.pageLength(p)
    val toLimit = math.max(0L, math.min(len.toLong, limit - pages.starts(p))).toInt
    val batchOnly = rowBytes > 0 && want.toLong * rowBytes >= batchWindowMinBytes &&
      pos + want < toLimit && ArrayDecoder.windowReadsOnlyWindow(pages.encoding(p))
    val until = if (batchOnly) pos + want else toLimit
    if (
      shape.isInstanceOf[ValueShape.Struct] || len == 0 || until <= pos || (pos == 0 && until == len)
    ) {
      page = decodePage(p); pageOff = 0
    } else {
      val ctx = pages.ctx(p)
      val dec = new ArrayDecoder(ctx, pages.buffers(p), oneBasedDictionary, keepStringDictionary)
      val w = dec.decodeWindow(pages.encoding(p), len, pos, until, shape)
      if (w == null) { page = decodePage(p); pageOff = 0 }
      else {
        ctx.check(
          w.length == until - pos,
          s"page window decoded to ${w.length} rows, expected ${until - pos}"
        )
        checkUtf8(w, ctx)
        page = w; pageOff = pos
      }
    }
  }

  private def decodePage(p: Int): ColumnArray = {
    val ctx = pages.ctx(p)
    val len = pages.pageLength(p)
    val enc = pages.encoding(p)
    val dec = new ArrayDecoder(ctx, pages.buffers(p), oneBasedDictionary, keepStringDictionary)
    val out = shape match {
      case s: ValueShape.Struct =>
        PackedStructDecoder.decode(enc, len, s, packedChildPositions, pages.buffers(p), ctx)
      case _ => dec.decode(enc, len, shape)
    }
    ctx.check(out.length == len, s"page decoded to ${out.length} rows but declares $len")
    checkUtf8(out, ctx)
    out
  }

  /** String columns: a page whose values are not valid UTF-8 is refused, as pylance does. */
  private def checkUtf8(a: ColumnArray, ctx: PageContext): Unit = if (utf8) {
    val v = a match {
      case v: VarBinaryArray => v
      case d: DictionaryArray => d.dictionary.values
      case _ => null
    }
    if (v != null) {
      val i = Utf8Validator.firstInvalid(v)
      if (i >= 0) throw ctx.corrupt(Utf8Validator.describe(v.offsets, 0, v.data, i))
    }
  }
}

private[v20] object LeafFieldReader {

  /**
   * A batch of at least this many bytes is read on its own rather than from a decoded page:
   * below it, one read per batch costs more (requests to object stores) than the copy saved.
   */
  val BatchWindowMinBytes: Long = 256L * 1024
}

/**
 * A blob v1 column: its descriptors (position, size) with the null rows marked, which 2.0
 * stores as (1, 0) rather than with validity. The bytes are fetched by the table layer.
 */
final class BlobV1FieldReader(descriptors: LeafFieldReader) extends FieldReader {
  def limitTo(end: Long): Unit = descriptors.limitTo(end)
  def seek(row: Long): Unit = descriptors.seek(row)
  def next(n: Int): ColumnArray = descriptors.next(n) match {
    case s: StructArray => io.sparklance.format.blob.BlobDescriptors.markV20Nulls(s)
    case other => other
  }
}

/** A struct: one reader per requested child; 2.0 cannot store null structs. */
final class StructFieldReader(children: Array[FieldReader]) extends FieldReader {
  def limitTo(end: Long): Unit = children.foreach {
    case l: LeafFieldReader => l.limitTo(end)
    case st: StructFieldReader => st.limitTo(end)
    case b: BlobV1FieldReader => b.limitTo(end)
    case _ =>
  }
  def seek(row: Long): Unit = children.foreach(_.seek(row))
  def next(n: Int): ColumnArray = new StructArray(n, null, children.map(_.next(n)))
}

/**
 * A list: an offsets column of `List` pages, items in another column read by `items`.
 * Offsets in a page are u64 *ends* relative to the page's first item, with no leading 0; a null
 * list adds `null_offset_adjustment`. The items of consecutive pages follow each other in the
 * items column (page p's items start after the `num_items` of the earlier pages).
 */
final class ListFieldReader(pages: ColumnPages, items: FieldReader, itemShape: ValueShape)
    extends FieldReader {
  private val itemsBefore: Array[Long] = {
    val a = new Array[Long](pages.numPages + 1)
    var p = 0
    while (p < pages.numPages) {
      val enc = pages.encoding(p)
      if (enc.getArrayEncodingCase != ArrayEncodingCase.LIST)
        throw pages.ctx(p).corrupt(
          s"list column page is encoded as ${enc.getArrayEncodingCase}, expected List"
        )
      a(p + 1) = a(p) + (if (pages.pageLength(p) == 0) 0L else enc.getList.getNumItems)
      p += 1
    }
    a
  }

  private var pageIdx = -1
  private var ends: Array[Long] =
    null // normalized item end (page-relative) of each row of the page
  private var nulls: Array[Boolean] = null
  private var pos = 0

  def seek(row: Long): Unit = {
    val p = pages.pageOf(row)
    pos = 0
    if (p < pages.numPages) {
      if (p != pageIdx || ends == null) load(p)
      pos = (row - pages.starts(p)).toInt
      items.seek(itemsBefore(p) + (if (pos == 0) 0L else ends(pos - 1)))
    } else {
      pageIdx = p; ends = null
      items.seek(itemsBefore(pages.numPages))
    }
  }

  def next(n: Int): ColumnArray = {
    val offsets = new Array[Int](n + 1)
    var outNulls: Array[Boolean] = null
    var row = 0
    var total = 0L
    while (row < n) {
      if (pageIdx >= pages.numPages)
        throw pages.ctx(pageIdx).corrupt(
          s"list column has only ${pages.numRows} rows, fewer than the rows asked for"
        )
      val len = ends.length
      if (pos == len) { load(pageIdx + 1); pos = 0 }
      else {
        val take = math.min(len - pos, n - row)
        var prev = if (pos == 0) 0L else ends(pos - 1)
        var i = 0
        while (i < take) {
          val e = ends(pos + i)
          total += e - prev
          if (total > Int.MaxValue - 16) throw pages.ctx(pageIdx).corrupt(
            "too many list items in one batch; read fewer rows at a time"
          )
          offsets(row + i + 1) = total.toInt
          prev = e
          i += 1
        }
        if (nulls != null) {
          if (outNulls == null) outNulls = new Array[Boolean](n)
          System.arraycopy(nulls, pos, outNulls, row, take)
        }
        pos += take
        row += take
        if (pos == len && row < n) { load(pageIdx + 1); pos = 0 }
      }
    }
    val child = items.next(offsets(n))
    new ListArray(n, outNulls, offsets, child)
  }

  /** Decodes the offsets of page p (skipping empty pages) into `ends` and `nulls`. */
  private def load(p0: Int): Unit = {
    var p = p0
    while (p < pages.numPages && pages.pageLength(p) == 0) p += 1
    pageIdx = p
    if (p >= pages.numPages) { ends = Array.emptyLongArray; nulls = null; return }
    val ctx = pages.ctx(p)
    val list = pages.encoding(p).getList
    val n = pages.pageLength(p)
    val dec = new ArrayDecoder(ctx, pages.buffers(p), oneBasedDictionary = true)
    val (raw, rawNulls) = ctx.guard(dec.unsignedLongs(list.getOffsets, n, "list offsets"))
    val adj = list.getNullOffsetAdjustment
    val numItems = list.getNumItems
    val e = new Array[Long](n)
    var nl: Array[Boolean] = rawNulls
    var prev = 0L
    var i = 0
    while (i < n) {
      val v = raw(i)
      var end = v
      if (adj > 0 && java.lang.Long.compareUnsigned(v, adj) >= 0) {
        end = java.lang.Long.remainderUnsigned(v, adj)
        if (nl == null) nl = new Array[Boolean](n)
        nl(i) = true
      }
      if (end < prev || end > numItems)
        throw ctx.corrupt(
          s"list offset $end of row $i is out of order (previous $prev) or beyond the page's $numItems items"
        )
      e(i) = end
      prev = end
      i += 1
    }
    ctx.check(
      n == 0 || prev == numItems,
      s"list offsets end at item $prev but the page declares $numItems items"
    )
    ends = e
    nulls = nl
  }
}
