package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.broadcast.Broadcast

import io.sparklance.format.{ColumnPageSpans, LanceField, LanceFileReader}
import io.sparklance.storage.FileIO
import io.sparklance.table.{DataFileRef, FragmentRef, RowCounts}

/** A range of physical rows `[start, end)` of one fragment. */
final case class FragmentSlice(fragment: FragmentRef, start: Long, end: Long)

/**
 * One Spark partition: slices read one after the other, keeping the rows that pass the row
 * filter. The filter travels with the partition rather than the reader factory because a
 * runtime filter (dynamic pruning) arrives after Spark may have made the factory. A large
 * filter (the join keys of dynamic pruning: hundreds of thousands of values) travels as a
 * broadcast (`shared`), sent to each executor once rather than with every task.
 */
final case class LanceInputPartition(
    slices: Array[FragmentSlice],
    filter: Option[LanceColumnarReader.FilterSpec] = None,
    shared: Option[Broadcast[LanceColumnarReader.FilterSpec]] = None)
  extends org.apache.spark.sql.connector.read.InputPartition {
  def rowFilter: Option[LanceColumnarReader.FilterSpec] = filter.orElse(shared.map(_.value))
}

/**
 * Turns fragments into partitions of about `targetBytes` each, like Spark's file sources:
 * a large fragment is split into row ranges, and small fragments are packed together, each
 * costing at least `openCostBytes`, so a dataset of many tiny fragments does not become many
 * tiny tasks.
 *
 * A large fragment is cut on page boundaries. Lance writers cut pages per column, each column
 * on its own, so no cut suits every column; the planner cuts where the projected column with
 * the largest pages (in bytes) cuts, so the most expensive column never decodes a page in two
 * tasks, and the other columns' pages straddling a cut are decoded in part by both (the
 * readers start mid-page without decoding what comes before where the encoding allows). The
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
  def defaultTarget(totalBytes: Long, maxPartitionBytes: Long, slots: Int,
      openCostBytes: Long): Long = {
    val n = math.max(1, slots)
    val fileRule = math.min(maxPartitionBytes, math.max(openCostBytes, ceilDiv(totalBytes, n)))
    balancedTarget(totalBytes, fileRule, n, openCostBytes)
  }

  /**
   * The split size for `totalBytes` on `slots` task slots when Spark's file rule gives
   * `fileRuleBytes`: the same size or smaller, so the number of splits is a whole multiple of
   * the slots. Three equal tasks on two slots take two task-times where four take two halves
   * of them; the file rule lands there whenever the bytes exceed `maxPartitionBytes` a little.
   */
  def balancedTarget(
      totalBytes: Long, fileRuleBytes: Long, slots: Int, openCostBytes: Long): Long = {
    val splits = math.max(1L, ceilDiv(totalBytes, math.max(1L, fileRuleBytes)))
    val n = math.max(1, slots).toLong
    if (splits % n == 0) fileRuleBytes
    else {
      val balanced = ceilDiv(totalBytes, ceilDiv(splits, n) * n)
      math.max(openCostBytes, math.min(fileRuleBytes, balanced))
    }
  }

  private def ceilDiv(a: Long, b: Long): Long = (a + b - 1) / b

  def plan(io: FileIO, fragments: Seq[FragmentRef], targetBytes: Long, openCostBytes: Long,
      fields: Seq[LanceField] = Nil): Seq[LanceInputPartition] = {
    val partitions = ArrayBuffer[(Array[FragmentSlice], Long)]()
    val current = ArrayBuffer[FragmentSlice]()
    var currentBytes = 0L
    def close(): Unit = if (current.nonEmpty) {
      partitions += ((current.toArray, currentBytes))
      current.clear()
      currentBytes = 0
    }
    fragments.foreach { f =>
      val rows = RowCounts.physicalRows(io, f)
      if (rows > 0) {
        val bytesPerRow = math.max(1L, estimatedBytes(f) / rows)
        val fullRows = math.max(1L, targetBytes / bytesPerRow)
        val frag =
          if (rows == f.physicalRows && f.physicalRowsTrusted) f
          else f.copy(physicalRows = rows, physicalRowsTrusted = true)
        // Slices holding no row a scalar index says can pass the filter are not planned.
        def add(start: Long, end: Long): Unit =
          if (frag.rowCandidates.forall(_.rangeCardinality(start, end) > 0)) {
            current += FragmentSlice(frag, start, end)
            currentBytes += math.max(openCostBytes, (end - start) * bytesPerRow)
          }
        if (rows <= math.max(RowAlign, fullRows / RowAlign * RowAlign)) {
          // Whole, packed with its neighbours (no I/O to plan it).
          if (current.nonEmpty &&
              currentBytes + math.max(openCostBytes, rows * bytesPerRow) > targetBytes) close()
          add(0, rows)
        } else {
          // Its first slice fills what is left of the partition being packed (fragments of
          // 55% and 45% of two tasks' bytes make two tasks of half, not 27.5 + 27.5 + 45),
          // the next ones are full, and the last is left open for the next fragment.
          val room = math.max(0L, targetBytes - currentBytes) / bytesPerRow
          val first = if (current.nonEmpty && room > 0 && room >= fullRows / 8) room else {
            close()
            fullRows
          }
          val bounds = pageBoundaries(io, frag, fields, rows).getOrElse(alignedBounds(rows))
          val cuts = cutAtBoundaries(bounds, fullRows, first)
          (0 until cuts.length - 1).foreach { i =>
            add(cuts(i), cuts(i + 1))
            if (i < cuts.length - 2) close()
          }
        }
      }
    }
    close()
    // A last partition under a quarter of the target (what page boundaries left over) joins
    // the one before rather than making a short task of its own.
    if (partitions.size >= 2 && partitions.last._2 < targetBytes / 4) {
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
  private[spark] def pageBoundaries(io: FileIO, fragment: FragmentRef, fields: Seq[LanceField],
      rows: Long): Option[Array[Long]] = {
    val ids = fields.flatMap(allIds).toSet
    fragment.files.find(df => df.fieldIds.exists(ids.contains)).flatMap { df =>
      val spans = try readSpans(io, df, fields) catch { case _: java.io.IOException => Nil }
      val best = spans.filter(_.numPages > 0).sortBy(s => (-s.meanPageBytes, s.column)).headOption
      best.map(s => boundaries(s.rowStarts, rows))
    }
  }

  private def readSpans(
      io: FileIO, df: DataFileRef, fields: Seq[LanceField]): Seq[ColumnPageSpans] = {
    val reader = LanceFileReader.open(io, df.path, df.major, df.minor, df.fileFields)
    try reader.pageSpans(fields) finally reader.close()
  }

  private def allIds(f: LanceField): Seq[Int] = f.id +: f.children.flatMap(allIds)

  /** Page starts clipped to `(0, rows)`, framed by 0 and `rows`, deduplicated (empty pages). */
  private def boundaries(starts: Array[Long], rows: Long): Array[Long] =
    (0L +: starts.filter(s => s > 0 && s < rows) :+ rows).distinct.sorted

  /**
   * Cuts from page boundaries `bounds` (`0, ..., rows`): each slice ends at the boundary nearest
   * to `rowsPerSlice` rows after its start (the first: `firstRows`, when positive), and holds
   * at least one page.
   */
  private[spark] def cutAtBoundaries(
      bounds: Array[Long], rowsPerSlice: Long, firstRows: Long = -1): Array[Long] = {
    val cuts = ArrayBuffer[Long](0L)
    val last = bounds.length - 1
    var i = 0 // index in bounds of the current slice's start
    while (i < last) {
      val step = if (i == 0 && firstRows > 0) firstRows else rowsPerSlice
      val target = bounds(i) + step
      var j = i + 1
      while (j < last && bounds(j) < target) j += 1
      // bounds(j) is the first boundary at or past the target (or the end); the one before may
      // be nearer.
      if (j - 1 > i && target - bounds(j - 1) < bounds(j) - target) j -= 1
      cuts += bounds(j)
      i = j
    }
    cuts.toArray
  }
}
