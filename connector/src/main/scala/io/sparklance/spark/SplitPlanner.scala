package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer

import io.sparklance.io.FileIO
import io.sparklance.table.{FragmentRef, RowCounts}

/** A range of physical rows `[start, end)` of one fragment. */
final case class FragmentSlice(fragment: FragmentRef, start: Long, end: Long)

/** One Spark partition: slices read one after the other. */
final case class LanceInputPartition(slices: Array[FragmentSlice]) extends org.apache.spark.sql.connector.read.InputPartition

/**
 * Turns fragments into partitions of about `targetBytes` each, like Spark's file sources:
 * a large fragment is split into row ranges (multiples of 1024 rows, which is where Lance
 * writers cut pages and chunks), and small fragments are packed together, each costing at
 * least `openCostBytes`, so a dataset of many tiny fragments does not become many tiny tasks.
 */
object SplitPlanner {
  private val RowAlign = 1024L
  /** When a manifest records no file sizes, assume this many bytes per row. */
  private val DefaultBytesPerRow = 64L

  def estimatedBytes(f: FragmentRef): Long = {
    val known = f.files.map(_.sizeBytes).sum
    if (known > 0) known else math.max(f.physicalRows, 1L) * DefaultBytesPerRow
  }

  def plan(io: FileIO, fragments: Seq[FragmentRef], targetBytes: Long, openCostBytes: Long): Seq[LanceInputPartition] = {
    val slices = fragments.flatMap { f =>
      val rows = RowCounts.physicalRows(io, f)
      if (rows == 0) Nil
      else {
        val bytesPerRow = math.max(1L, estimatedBytes(f) / rows)
        val rowsPerSlice = math.max(RowAlign, (targetBytes / bytesPerRow) / RowAlign * RowAlign)
        val frag = if (rows == f.physicalRows && f.physicalRowsTrusted) f else f.copy(physicalRows = rows, physicalRowsTrusted = true)
        (0L until rows by rowsPerSlice).map(s => (FragmentSlice(frag, s, math.min(rows, s + rowsPerSlice)), bytesPerRow))
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
}
