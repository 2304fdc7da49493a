package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.roaringbitmap.RoaringBitmap

import io.sparklance.format.LanceField
import io.sparklance.storage.FileIO

/**
 * One partition's rows of a pushed TopN ([[TopNSpec]]): its first `limit` rows in the
 * TopN's order, read in two passes. The first decodes only the key columns (after the
 * pushed filter and deletions) and keeps the `limit` best keys with their row addresses; the
 * second reads every requested column of just those rows, skipping the batches holding none
 * of them undecoded, as an index's candidates are ([[io.sparklance.table.FragmentReader]]).
 * Which of the rows tied at the `limit`-th key a task keeps is unspecified, as it is for
 * Spark's own sort and limit.
 */
final class LanceTopNReader(
    io: FileIO,
    partition: LanceInputPartition,
    fields: Seq[LanceField],
    schema: StructType,
    batchSize: Int,
    metadata: LanceColumnarReader.MetadataSpec,
    topN: TopNSpec) extends PartitionReader[ColumnarBatch] {

  /** The first pass's metrics, frozen when it ends (its storage counters are per thread). */
  private var selectMetrics: Array[CustomTaskMetric] = Array.empty
  private var rows: LanceColumnarReader = _

  override def next(): Boolean = {
    if (rows == null) {
      rows = new LanceColumnarReader(io, select(), fields, schema, batchSize, filter = None,
        metadata = metadata)
    }
    rows.next()
  }

  override def get(): ColumnarBatch = rows.get()

  /** The partition narrowed to the rows holding this task's best `limit` keys. */
  private def select(): LanceInputPartition = {
    val keyFields = topN.columns.map(c => fields.find(_.name == c).getOrElse(
      throw new IllegalStateException(s"TopN key '$c' is not among the columns read")))
    val keySchema = StructType(topN.columns.map(c => schema(c)) :+
      StructField(LanceMetadataColumns.RowAddr.name, LongType, nullable = false))
    val address = keyFields.length
    val keys = new LanceColumnarReader(io, partition, keyFields, keySchema, batchSize,
      partition.rowFilter, metadata = LanceColumnarReader.MetadataSpec(
        Seq(address -> LanceMetadataColumns.RowAddr)))
    val order = topN.ordering(keySchema)
    // The worst key kept is at the head, to be replaced by a better one.
    val best = new java.util.PriorityQueue[UnsafeRow](topN.limit, order.reverse)
    val copy = UnsafeProjection.create(keySchema)
    try {
      while (keys.next()) {
        val it = keys.get().rowIterator()
        while (it.hasNext) {
          val row: InternalRow = it.next()
          if (best.size < topN.limit) best.add(copy(row).copy())
          else if (order.compare(row, best.peek()) < 0) {
            best.poll()
            best.add(copy(row).copy())
          }
        }
      }
      selectMetrics = keys.currentMetricsValues()
    } finally keys.close()
    val byFragment = scala.collection.mutable.HashMap[Long, RoaringBitmap]()
    best.forEach { r =>
      val a = r.getLong(address)
      byFragment.getOrElseUpdate(a >>> 32, new RoaringBitmap()).add((a & 0xFFFFFFFFL).toInt)
    }
    val slices = partition.slices.flatMap { s =>
      byFragment.get(s.fragment.id).flatMap { chosen =>
        val here = RoaringBitmap.and(chosen, RoaringBitmap.bitmapOfRange(s.start, s.end))
        if (here.isEmpty) None
        else Some(FragmentSlice(s.fragment.copy(rowCandidates = Some(here)),
          here.first().toLong, here.last().toLong + 1))
      }
    }
    LanceInputPartition(slices)
  }

  /**
   * Both passes' fragments and storage counts, summed; skipped rows are the first pass's
   * (deleted or filtered out): the second skips only rows that are not among the best.
   */
  override def currentMetricsValues(): Array[CustomTaskMetric] = {
    val second = if (rows == null) Array.empty[CustomTaskMetric]
      else rows.currentMetricsValues().filter(m => LanceTopNReader.Summed(m.name()))
    (selectMetrics ++ second).groupBy(_.name()).map { case (name, ms) =>
      metrics.TaskMetricValue(name, ms.map(_.value()).sum): CustomTaskMetric
    }.toArray
  }

  override def close(): Unit = if (rows != null) rows.close()
}

object LanceTopNReader {
  private val Summed: Set[String] =
    Set(metrics.FragmentsRead.Name, metrics.StorageRequests.Name, metrics.StorageBytesRead.Name)
}
