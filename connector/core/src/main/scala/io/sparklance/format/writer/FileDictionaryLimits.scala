package io.sparklance.format.writer

import io.sparklance.format.{ColumnArray, FixedWidthArray, LanceField, NullArray, VarBinaryArray}

/**
 * The distinct values a file has taken of each dictionary column whose keys are narrow
 * (int8, uint8, int16, uint16), so that no file holds more than its keys can index. pylance
 * 14.0.2's reader merges the dictionaries of the pages one read batch spans, which can be a
 * whole file, and refuses a merged dictionary larger than the key type
 * (`Dictionary key bigger than the key type`): pylance's own writer makes such files and then
 * cannot read them. A writer asks [[fit]] how many rows of a batch the file can still take
 * and rolls over to a new file for the rest.
 */
private[writer] final class FileDictionaryLimits(fields: Seq[LanceField], version: FileVersion) {

  /** One dictionary leaf of top-level field `field`. */
  private final class Limit(val field: Int, val lp: LeafPath, val capacity: Int) {
    val seen = new DistinctValues()

    /** The last batch's items' rows and values, from [[rowsFitting]] for [[admit]]. */
    private var shredded: Shredded = _
    private var itemRows: Array[Int] = _

    /** Rows of `top` whose values fit beside those the file has (counting them on the way). */
    def rowsFitting(top: ColumnArray): Int = {
      val s = Shredder.shred(lp, top)
      shredded = s
      itemRows = rowsOfItems(s)
      val k = firstOver(s, s.numVisible)
      if (k < 0) top.length else row(k)
    }

    /** Counts the values of the last batch's first `rows` rows. */
    def admit(rows: Int): Unit = {
      val s = shredded
      var k = 0
      while (k < s.numVisible && row(k) < rows) k += 1
      firstOver(s, k)
      shredded = null; itemRows = null
    }

    /** Drops the last batch (its values stay counted). */
    def forget(): Unit = { shredded = null; itemRows = null }

    private def row(k: Int): Int = if (itemRows == null) k else itemRows(k)

    /** Adds the values of items `[0, until)`: the first that passes the capacity, or -1. */
    private def firstOver(s: Shredded, until: Int): Int = {
      val vis = s.visibleIdx
      var k = 0
      while (k < until) {
        val i = if (vis == null) k else vis(k)
        if (i >= 0) {
          s.values match {
            case v: VarBinaryArray =>
              seen.getOrAdd(v.data, v.offsets(i), v.offsets(i + 1) - v.offsets(i))
            case f: FixedWidthArray => seen.getOrAdd(f.data, i * f.byteWidth, f.byteWidth)
            case _: NullArray =>
            case other => throw new IllegalArgumentException(
                s"expected dictionary values, got ${other.getClass.getSimpleName}"
              )
          }
          if (seen.size > capacity) return k
        }
        k += 1
      }
      -1
    }

    /** The row of each visible item, or null when item k is row k (no list above the leaf). */
    private def rowsOfItems(s: Shredded): Array[Int] = {
      if (lp.maxRep == 0) return null
      val out = new Array[Int](s.numVisible)
      var row = -1
      var k = 0
      var i = 0
      while (i < s.numLevels) {
        if (s.rep(i) == lp.maxRep) row += 1
        if (s.defs == null || s.defs(i) <= lp.maxVisibleDef) { out(k) = row; k += 1 }
        i += 1
      }
      out
    }
  }

  private val limits: Array[Limit] = fields.zipWithIndex.flatMap { case (f, i) =>
    LeafPath.leaves(f).flatMap { lp =>
      if (lp.isBlob || lp.isPacked) None
      else DeclaredDictionary.of(lp.leaf).flatMap(DeclaredDictionary.capacity(_, version))
        .map(new Limit(i, lp, _))
    }
  }.toArray

  /**
   * How many leading rows of `columns` (`n` rows) the file can take, every dictionary column
   * keeping to what its keys index; those rows' values are counted as the file's.
   */
  def fit(columns: Array[ColumnArray], n: Int): Int = {
    if (limits.isEmpty) return n
    val marks = limits.map(_.seen.size)
    var rows = n
    limits.foreach(l => rows = math.min(rows, l.rowsFitting(columns(l.field))))
    // The whole batch fits (the usual case): every column has counted exactly its values.
    // Else each column counts again, up to the rows the file takes.
    if (rows < n) {
      var j = 0
      while (j < limits.length) { limits(j).seen.truncate(marks(j)); limits(j).admit(rows); j += 1 }
    } else limits.foreach(_.forget())
    rows
  }

  /** The first dictionary column and its capacity, for an error when a row cannot fit at all. */
  def describe: String = limits.headOption.map(l =>
    s"column '${l.lp.path.map(_.name).mkString(".")}' (${l.lp.leaf.logicalType.text}) can " +
      s"hold at most ${l.capacity} distinct values in one file"
  ).getOrElse("")
}
