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
    val slices = fragments.flatMap { f =>
      val rows = RowCounts.physicalRows(io, f)
      if (rows == 0) Nil
      else {
        val bytesPerRow = math.max(1L, estimatedBytes(f) / rows)
        // Equal slices (5 of 20% rather than 4 of 24% and one of 4%), so tasks take alike.
        val fullSlices = math.max(1L, targetBytes / bytesPerRow)
        val rowsPerSlice = ceilDiv(rows, ceilDiv(rows, fullSlices))
        val frag =
          if (rows == f.physicalRows && f.physicalRowsTrusted) f
          else f.copy(physicalRows = rows, physicalRowsTrusted = true)
        val cuts =
          if (rows <= math.max(RowAlign, fullSlices / RowAlign * RowAlign)) Array(0L, rows)
          else pageBoundaries(io, frag, fields, rows) match {
            case Some(bounds) => cutAtBoundaries(bounds, rowsPerSlice)
            case None => alignedCuts(rows, rowsPerSlice)
          }
        // Slices holding no row a scalar index says can pass the filter are not planned.
        (0 until cuts.length - 1).filter(i => frag.rowCandidates.forall(
          _.rangeCardinality(cuts(i), cuts(i + 1)) > 0))
          .map(i => (FragmentSlice(frag, cuts(i), cuts(i + 1)), bytesPerRow))
      }
    }
    val partitions = ArrayBuffer[LanceInputPartition]()
    val current = ArrayBuffer[FragmentSlice]()
    var currentBytes = 0L
    slices.foreach { case (slice, bytesPerRow) =>
      val bytes = math.max(openCostBytes, (slice.end - slice.start) * bytesPerRow)
      if (current.nonEmpty && currentBytes + bytes > targetBytes) {
        partitions += LanceInputPartition(current.toArray)
        current.clear()
        currentBytes = 0
      }
      current += slice
      currentBytes += bytes
    }
    if (current.nonEmpty) partitions += LanceInputPartition(current.toArray)
    partitions.toSeq
  }

  /** Cuts every multiple of 1024 rows near `rowsPerSlice`: `0, s, 2s, ..., rows`. */
  private[spark] def alignedCuts(rows: Long, rowsPerSlice: Long): Array[Long] = {
    val step = math.max(RowAlign, rowsPerSlice / RowAlign * RowAlign)
    ((0L until rows by step) :+ rows).toArray
  }

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
   * to `rowsPerSlice` rows after its start, and holds at least one page.
   */
  private[spark] def cutAtBoundaries(bounds: Array[Long], rowsPerSlice: Long): Array[Long] = {
    val cuts = ArrayBuffer[Long](0L)
    val last = bounds.length - 1
    var i = 0 // index in bounds of the current slice's start
    while (i < last) {
      val target = bounds(i) + rowsPerSlice
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
