package io.sparklance.format.structural

/**
 * A decoded run of levels and values: a mini-block chunk, an unzipped full-zip range or a
 * constant page. `defs` are in the page's own numbering. Cursor fields track how far a scan
 * has consumed it.
 */
private[structural] final class Chunk(
    val rep: Array[Short],
    val defs: Array[Short],
    val nLevels: Int,
    val values: Values
) {
  var pos = 0
  var item = 0
  def exhausted: Boolean = pos >= nLevels
}

/** Sequential decoding of one page over a row range fixed when it was opened. */
private[structural] abstract class PageDecoder {

  /** Appends the next `k` rows of this page to `out`. */
  def read(k: Int, out: LeafBatch): Unit

  /** Moves past the next `k` rows, fewer than the page has left. */
  def skip(k: Int): Unit
}

/**
 * The row walking shared by every page layout: rows are found from repetition levels (a
 * level equal to max_rep starts a row; without lists every level is a row), visible items
 * from definition levels (def <= max visible def owns a value slot), and rows may continue
 * from one chunk into the next.
 */
private[structural] abstract class LevelPage(
    val layers: Layers,
    val defMap: Array[Short],
    val pageMaxVisibleDef: Int,
    val ref: PageRef
) extends PageDecoder {
  private val maxRep = layers.maxRep
  protected var cur: Chunk = null

  /** The next chunk of the opened range, or null at its end. */
  protected def nextChunk(): Chunk

  /** Whether the chunk after the current one starts with levels continuing the current row. */
  protected def nextChunkContinuesRow: Boolean

  private def visibleIn(c: Chunk, from: Int, until: Int): Int = {
    val d = c.defs
    if (d == null) until - from
    else {
      var v = 0; var i = from; val m = pageMaxVisibleDef
      while (i < until) { if (d(i) <= m) v += 1; i += 1 }
      v
    }
  }

  private def take(c: Chunk, until: Int, out: LeafBatch): Unit = {
    val vis = visibleIn(c, c.pos, until)
    if (c.item + vis > c.values.count) throw ref.corrupt(
      s"levels reference ${c.item + vis} values but the chunk holds ${c.values.count}"
    )
    if (out != null) {
      out.appendLevels(c.rep, c.defs, defMap, c.pos, until)
      out.values.append(c.values, c.item, c.item + vis)
    }
    c.item += vis; c.pos = until
  }

  /** Reads (out != null) or skips (out == null) `k` rows. */
  protected final def walk(k: Int, out: LeafBatch): Unit = {
    if (maxRep == 0) {
      var left = k
      while (left > 0) {
        if (cur == null || cur.exhausted) {
          cur = nextChunk(); if (cur == null) throw ref.corrupt(s"page ends $left rows early")
        }
        val t = math.min(left, cur.nLevels - cur.pos)
        take(cur, cur.pos + t, out); left -= t
      }
      return
    }
    var started = 0
    var done = false
    while (!done) {
      if (cur == null || cur.exhausted) {
        if (cur != null && started == k && !nextChunkContinuesRow) done = true
        else {
          val c = nextChunk()
          if (c == null) {
            if (started < k) throw ref.corrupt(s"page ends ${k - started} rows early")
            done = true
          } else cur = c
        }
      }
      if (!done) {
        val c = cur; val r = c.rep
        var i = c.pos; val end = c.nLevels
        if (r == null) {
          // No repetition stream (a page whose rows are single items): every level starts a row.
          val t = math.min(k - started, end - i)
          i += t; started += t
          if (started == k && i < end) done = true
        } else {
          var stop = false
          while (i < end && !stop) {
            if (r(i) == maxRep) { if (started == k) stop = true else { started += 1; i += 1 } }
            else i += 1
          }
          if (stop) done = true
        }
        take(c, i, out)
      }
    }
  }

  def read(k: Int, out: LeafBatch): Unit = walk(k, out)
  def skip(k: Int): Unit = walk(k, null)
}
