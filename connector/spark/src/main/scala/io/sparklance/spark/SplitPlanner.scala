package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer

import io.sparklance.format.{ColumnPageSpans, LanceField}
import io.sparklance.storage.FileIO
import io.sparklance.table.{DataFileRef, FragmentRef, RowCounts}

/**
 * Turns fragments into partitions of about `targetBytes` each, like Spark's file sources:
 * a large fragment is split into row ranges, and small fragments are packed together, each
 * costing at least `openCostBytes`, so a dataset of many tiny fragments does not become many
 * tiny tasks.
 *
 * A large fragment is cut on page boundaries where one is near enough to even slices. Lance
 * writers cut pages per column, each column on its own, so no cut suits every column; the
 * planner cuts where the projected column with the largest pages (in bytes) cuts, so the
 * most expensive column never decodes a page in two tasks, and the other columns' pages
 * straddling a cut are decoded in part by both (the readers start mid-page without decoding
 * what comes before where the encoding allows); when that column's pages are too large for
 * even slices, mid-page ([[cutAtBoundaries]]). The
 * page boundaries come from the tail of one data file (the first holding a projected field),
 * read on the driver for large fragments only; small fragments cost no I/O. Without a
 * projected column (e.g. `count(*)`) or when that file cannot be read on the driver (an
 * I/O error such as a permission denied), ranges are multiples of 1024 rows instead; a
 * corrupt file fails the planning as it would fail the scan.
 */
object SplitPlanner {
  private val RowAlign = 1024L

  /** When a manifest records no file sizes, assume this many bytes per row. */
  private val DefaultBytesPerRow = 64L

  def estimatedBytes(f: FragmentRef): Long = {
    val known = f.files.map(_.sizeBytes).sum
    if (known > 0) known else math.max(f.physicalRows, 1L) * DefaultBytesPerRow
  }

  /**
   * The split size without an explicit `split_size`: Spark's rule for file sources,
   * `min(maxPartitionBytes, max(openCostBytes, total / slots))`, the division rounded up (so
   * an odd total does not leave one byte for another wave of tasks), then evened out over
   * the slots ([[balancedTarget]]).
   */
  def defaultTarget(
      totalBytes: Long,
      maxPartitionBytes: Long,
      slots: Int,
      openCostBytes: Long
  ): Long = {
    val n = math.max(1, slots)
    val fileRule = math.min(maxPartitionBytes, math.max(openCostBytes, ceilDiv(totalBytes, n)))
    balancedTarget(totalBytes, fileRule, n, openCostBytes)
  }

  /**
   * The split size that gives each of `slots` task slots one split, unless a split would then
   * decode more than `maxPartitionBytes` (of the `readShare` of its bytes the columns read
   * take): for rows Spark aggregates by nearly distinct keys, where each task's partial
   * aggregation leaves about as many rows as it read, so more tasks leave more rows to
   * exchange and merge (a grouping of all TPC-H lineitem by `l_partkey, l_suppkey`: 3.0 s in
   * six tasks, 2.0 s in one, on two cores).
   */
  def perCoreTarget(
      totalBytes: Long,
      maxPartitionBytes: Long,
      slots: Int,
      openCostBytes: Long,
      readShare: Double
  ): Long = {
    val cap = math.min(Long.MaxValue / 2, (maxPartitionBytes / math.max(readShare, 1e-6)).toLong)
    math.max(openCostBytes, math.min(cap, ceilDiv(totalBytes, math.max(1, slots).toLong)))
  }

  /**
   * The split size for `totalBytes` on `slots` task slots when Spark's file rule gives
   * `fileRuleBytes`: the same size or smaller, so the number of splits is a whole multiple of
   * the slots. Three equal tasks on two slots take two task-times where four take two halves
   * of them; the file rule lands there whenever the bytes exceed `maxPartitionBytes` a little.
   */
  def balancedTarget(
      totalBytes: Long,
      fileRuleBytes: Long,
      slots: Int,
      openCostBytes: Long
  ): Long = {
    val splits = math.max(1L, ceilDiv(totalBytes, math.max(1L, fileRuleBytes)))
    val n = math.max(1, slots).toLong
    if (splits % n == 0) fileRuleBytes
    else {
      val balanced = ceilDiv(totalBytes, ceilDiv(splits, n) * n)
      math.max(openCostBytes, math.min(fileRuleBytes, balanced))
    }
  }

  private def ceilDiv(a: Long, b: Long): Long = (a + b - 1) / b

  /**
   * Partitions of the fragments' rows, each about `targetBytes` or a little less: as many as
   * the target gives, their size evened out (47 MB over a 25.5 MB target make two of 23.5 MB,
   * not 25.5 + 21.5 MB), so tasks on as many slots end together.
   */
  def plan(
      io: FileIO,
      fragments: Seq[FragmentRef],
      targetBytes: Long,
      openCostBytes: Long,
      fields: Seq[LanceField] = Nil,
      midPageMinRows: Long = MidPageMinRows
  ): Seq[LanceInputPartition] = {
    // (fragment, physical rows, estimated bytes per row) of the fragments holding rows.
    val sized = fragments.map(f => (f, RowCounts.physicalRows(io, f))).filter(_._2 > 0)
      .map { case (f, rows) => (f, rows, math.max(1L, estimatedBytes(f) / rows)) }
    def cost(rows: Long, bytesPerRow: Long): Long = math.max(openCostBytes, rows * bytesPerRow)
    val total = sized.map { case (_, rows, bytesPerRow) => cost(rows, bytesPerRow) }.sum
    val target = math.max(1L, targetBytes)
    val share = if (total <= 0) target else ceilDiv(total, ceilDiv(total, target))
    val partitions = ArrayBuffer[(Array[FragmentSlice], Long)]()
    val current = ArrayBuffer[FragmentSlice]()
    var currentBytes = 0L
    def close(): Unit = if (current.nonEmpty) {
      partitions += ((current.toArray, currentBytes))
      current.clear()
      currentBytes = 0
    }
    sized.foreach { case (f, rows, bytesPerRow) =>
      val fullRows = math.max(1L, share / bytesPerRow)
      val frag =
        if (rows == f.physicalRows && f.physicalRowsTrusted) f
        else f.copy(physicalRows = rows, physicalRowsTrusted = true)
      // Slices holding no row a scalar index says can pass the filter are not planned.
      def add(start: Long, end: Long): Unit =
        if (frag.rowCandidates.forall(_.rangeCardinality(start, end) > 0)) {
          current += FragmentSlice(frag, start, end)
          // The open cost counts once a fragment, as in the share.
          currentBytes += (
            if (start == 0 && end == rows) cost(rows, bytesPerRow)
            else (end - start) * bytesPerRow
          )
        }
      if (rows <= math.max(RowAlign, fullRows / RowAlign * RowAlign)) {
        // Whole, packed with its neighbours (no I/O to plan it); a sixteenth over the share
        // still packs, as a slice cut at a page boundary may leave a little more or less.
        if (
          current.nonEmpty &&
          currentBytes + cost(rows, bytesPerRow) > share + share / 16
        ) close()
        add(0, rows)
      } else {
        // Its first slice fills what is left of the partition being packed (fragments of
        // 55% and 45% of two tasks' bytes make two tasks of half, not 27.5 + 27.5 + 45),
        // the next ones are full, and the last is left open for the next fragment.
        val room = math.max(0L, share - currentBytes) / bytesPerRow
        val first = if (current.nonEmpty && room > 0 && room >= fullRows / 8) room
        else {
          close()
          fullRows
        }
        val bounds = pageBoundaries(io, frag, fields, rows).getOrElse(alignedBounds(rows))
        val cuts = cutAtBoundaries(bounds, fullRows, first, midPageMinRows)
        (0 until cuts.length - 1).foreach { i =>
          add(cuts(i), cuts(i + 1))
          if (i < cuts.length - 2) close()
        }
      }
    }
    close()
    // A last partition under a quarter of the share (what page boundaries left over) joins
    // the one before rather than making a short task of its own.
    if (partitions.size >= 2 && partitions.last._2 < share / 4) {
      val (tail, _) = partitions.remove(partitions.size - 1)
      val (before, bytes) = partitions.remove(partitions.size - 1)
      partitions += ((before ++ tail, bytes))
    }
    partitions.map(p => LanceInputPartition(p._1)).toSeq
  }

  /** Boundaries every 1024 rows, for a fragment whose pages are not known: `0, 1024, ..., rows`. */
  private[spark] def alignedBounds(rows: Long): Array[Long] =
    ((0L until rows by RowAlign) :+ rows).toArray

  /**
   * Page boundaries (`0, ..., rows`, ascending, no duplicates) of the projected column of
   * `fragment` whose pages are largest; None when there is no projected column to go by or
   * its file cannot be read here.
   */
  private[spark] def pageBoundaries(
      io: FileIO,
      fragment: FragmentRef,
      fields: Seq[LanceField],
      rows: Long
  ): Option[Array[Long]] = {
    val ids = fields.flatMap(allIds).toSet
    fragment.files.find(df => df.fieldIds.exists(ids.contains)).flatMap { df =>
      val spans =
        try readSpans(io, df, fields)
        catch { case _: java.io.IOException => Nil }
      val best = spans.filter(_.numPages > 0).sortBy(s => (-s.meanPageBytes, s.column)).headOption
      best.map(s => boundaries(s.rowStarts, rows))
    }
  }

  private def readSpans(
      io: FileIO,
      df: DataFileRef,
      fields: Seq[LanceField]
  ): Seq[ColumnPageSpans] = {
    val reader = df.open(io)
    try reader.pageSpans(fields)
    finally reader.close()
  }

  private def allIds(f: LanceField): Seq[Int] = f.id +: f.children.flatMap(allIds)

  /** Page starts clipped to `(0, rows)`, framed by 0 and `rows`, deduplicated (empty pages). */
  private def boundaries(starts: Array[Long], rows: Long): Array[Long] =
    (0L +: starts.filter(s => s > 0 && s < rows) :+ rows).distinct.sorted

  /**
   * Cuts from page boundaries `bounds` (`0, ..., rows`): each slice ends at the boundary nearest
   * to `rowsPerSlice` rows after its start (the first: `firstRows`, when positive), and holds
   * at least one page; except that a slice of at least `midPageMinRows` rows whose nearest
   * boundary is more than a 32nd of it away ends at its target rounded to 1024 rows,
   * mid-page: one page of 800,000 rows would otherwise make one task where two were
   * wanted, and pages of 500,000 rows tasks of 62% and 38%. The reader of the second part
   * skips to the chunk holding its first row (see `MiniBlockPage.skip`), so a mid-page cut
   * costs a page's metadata in both tasks, not a decode of the first part. A slice that
   * would end within a 32nd of itself before the fragment's end takes the rest.
   */
  private[spark] def cutAtBoundaries(
      bounds: Array[Long],
      rowsPerSlice: Long,
      firstRows: Long = -1,
      midPageMinRows: Long = MidPageMinRows
  ): Array[Long] = {
    val cuts = ArrayBuffer[Long](0L)
    val last = bounds.length - 1
    val rows = bounds(last)
    var start = 0L
    var i = 0 // index in bounds of the last boundary at or before start
    while (start < rows) {
      val step = if (start == 0 && firstRows > 0) firstRows else rowsPerSlice
      val target = start + step
      val slack = step / 32
      while (i < last && bounds(i + 1) <= start) i += 1
      var j = i + 1
      while (j < last && bounds(j) < target) j += 1
      // bounds(j) is the first boundary at or past the target (or the end); the one before may
      // be nearer.
      if (j - 1 > i && target - bounds(j - 1) < bounds(j) - target) j -= 1
      val end =
        if (step < midPageMinRows || math.abs(bounds(j) - target) <= slack) bounds(j)
        else if (rows - target <= slack) rows
        else {
          val aligned = math.round(target.toDouble / RowAlign) * RowAlign
          if (aligned > start && aligned < rows) aligned else target
        }
      cuts += end
      start = end
    }
    cuts.toArray
  }

  /** Slices of fewer rows than this are cut at page boundaries only. */
  private[spark] val MidPageMinRows = 16L * RowAlign
}
