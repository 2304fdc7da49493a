package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types._
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
    topN: TopNSpec
) extends PartitionReader[ColumnarBatch] {

  /** The first pass's metrics, frozen when it ends (its storage counters are per thread). */
  private var selectMetrics: Array[CustomTaskMetric] = Array.empty
  private var rows: LanceColumnarReader = _

  override def next(): Boolean = {
    if (rows == null) {
      rows = new LanceColumnarReader(
        io,
        select(),
        fields,
        schema,
        batchSize,
        filter = None,
        metadata = metadata
      )
    }
    rows.next()
  }

  override def get(): ColumnarBatch = rows.get()

  /** The partition narrowed to the rows holding this task's best `limit` keys. */
  private def select(): LanceInputPartition = {
    val keyFields = topN.columns.map(c =>
      fields.find(_.name == c).getOrElse(
        throw new IllegalStateException(s"TopN key '$c' is not among the columns read")
      )
    )
    val keySchema = StructType(topN.columns.map(c => schema(c)) :+
      StructField(LanceMetadataColumns.RowAddr.name, LongType, nullable = false))
    val address = keyFields.length
    val keys = new LanceColumnarReader(
      io,
      partition,
      keyFields,
      keySchema,
      batchSize,
      partition.rowFilter,
      metadata = LanceColumnarReader.MetadataSpec(
        Seq(address -> LanceMetadataColumns.RowAddr)
      )
    )
    val kind = LanceTopNReader.integralKind(keySchema(0).dataType)
    val chosen =
      try {
        val addresses =
          if (topN.keys.size == 1 && kind >= 0) byIntegralKey(keys, kind)
          else byRows(keys, keySchema, address)
        selectMetrics = keys.currentMetricsValues()
        addresses
      } finally keys.close()
    val byFragment = scala.collection.mutable.HashMap[Long, RoaringBitmap]()
    chosen.foreach { a =>
      byFragment.getOrElseUpdate(a >>> 32, new RoaringBitmap()).add((a & 0xffffffffL).toInt)
    }
    val slices = partition.slices.flatMap { s =>
      byFragment.get(s.fragment.id).flatMap { chosen =>
        val here = RoaringBitmap.and(chosen, RoaringBitmap.bitmapOfRange(s.start, s.end))
        if (here.isEmpty) None
        else Some(FragmentSlice(
          s.fragment.copy(rowCandidates = Some(here)),
          here.first().toLong,
          here.last().toLong + 1
        ))
      }
    }
    LanceInputPartition(slices)
  }

  /**
   * Whether batches are walked last row first: for a descending first key. Tables are mostly
   * appended in ascending key order (ids, times), where a batch's best rows for `DESC` are then
   * its last: walked first, they leave the rest below the worst row kept, not copied. Which way
   * a batch is walked changes the work, never the rows kept (but for ties).
   */
  private val backward = !topN.keys.head.ascending

  /**
   * The addresses of the best rows by Spark's ordering over the key columns (any orderable
   * type); a row is copied only when it enters the kept set.
   */
  private def byRows(
      keys: LanceColumnarReader,
      keySchema: StructType,
      address: Int
  ): Array[Long] = {
    val order = topN.ordering(keySchema)
    // The worst key kept is at the head, to be replaced by a better one.
    val best = new java.util.PriorityQueue[UnsafeRow](topN.limit, order.reverse)
    val copy = UnsafeProjection.create(keySchema)
    while (keys.next()) {
      val batch = keys.get()
      val n = batch.numRows()
      var j = 0
      while (j < n) {
        val i = if (backward) n - 1 - j else j
        val row: InternalRow = batch.getRow(i)
        if (best.size < topN.limit) best.add(copy(row).copy())
        else if (order.compare(row, best.peek()) < 0) {
          best.poll()
          best.add(copy(row).copy())
        }
        j += 1
      }
    }
    val out = new Array[Long](best.size)
    var k = 0
    best.forEach { r => out(k) = r.getLong(address); k += 1 }
    out
  }

  /**
   * As [[byRows]] for one integral key, read from the vector as a long ([[LongKeyHeap]]);
   * `kind` is its [[LanceTopNReader.integralKind]].
   */
  private def byIntegralKey(keys: LanceColumnarReader, kind: Int): Array[Long] = {
    val key = topN.keys.head
    val heap = new LongKeyHeap(topN.limit, key.ascending, key.nullsFirst)
    while (keys.next()) {
      val batch = keys.get()
      val v = batch.column(0)
      val a = batch.column(1)
      val n = batch.numRows()
      var j = 0
      while (j < n) {
        val i = if (backward) n - 1 - j else j
        val isNull = v.isNullAt(i)
        val k =
          if (isNull) 0L
          else if (kind == 0) v.getLong(i)
          else if (kind == 1) v.getInt(i).toLong
          else if (kind == 2) v.getShort(i).toLong
          else v.getByte(i).toLong
        heap.offer(isNull, k, a.getLong(i))
        j += 1
      }
    }
    heap.rowAddresses
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

  /**
   * How a key of type `t` is read as a long: 0 `getLong`, 1 `getInt`, 2 `getShort`, 3
   * `getByte`; -1 when it is not an integer, date or timestamp.
   */
  private def integralKind(t: DataType): Int = t match {
    case LongType | TimestampType | TimestampNTZType => 0
    case IntegerType | DateType => 1
    case ShortType => 2
    case ByteType => 3
    case _ => -1
  }

  private val Summed: Set[String] =
    Set(metrics.FragmentsRead.Name, metrics.StorageRequests.Name, metrics.StorageBytesRead.Name)
}
