package io.sparklance.spark

import java.util.OptionalLong

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{
  Batch,
  InputPartition,
  PartitionReader,
  PartitionReaderFactory,
  Scan,
  Statistics,
  SupportsReportStatistics
}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

import io.sparklance.spark.aggregate.{PartialAggregate, PartialAggregator}

/**
 * A scan that returns each task's partial aggregation of its rows instead of the rows, for
 * an aggregation Spark pushed partially ([[LanceScanBuilder.pushAggregation]]); Spark adds the
 * partials up. `rows` is the scan of the aggregation's input columns with the pushed filter:
 * its partitions and readers are this scan's, each reader's batches folded by a
 * [[PartialAggregator]].
 */
final class LanceAggregateScan(rows: LanceScan, spec: PartialAggregate)
    extends Scan with SupportsReportStatistics {
  override def readSchema(): StructType = spec.outputSchema

  override def description(): String =
    s"${rows.description()} PartialAggregate: [${spec.aggs.mkString(", ")}]" +
      (if (spec.groups.isEmpty) "" else s" GroupBy: [${spec.groups.map(_.name).mkString(", ")}]")

  override def toBatch: Batch = new LanceAggregateScan.AggregateBatch(rows.toBatch, spec)

  /**
   * Rows, not columnar batches. Said here so that Spark does not plan the partitions and
   * create the reader factory (a broadcast of the storage settings) at planning time to ask
   * each partition, as it does for the default mode.
   */
  override def columnarSupportMode(): Scan.ColumnarSupportMode =
    Scan.ColumnarSupportMode.UNSUPPORTED

  override def supportedCustomMetrics(): Array[CustomMetric] = rows.supportedCustomMetrics()

  /**
   * What Spark's own statistics give an aggregate over the rows: with groups, at most one row
   * per input row, and the input's bytes scaled by the ratio of row widths; without, one row
   * per task.
   */
  override def estimateStatistics(): Statistics = {
    val in = rows.estimateStatistics()
    val outWidth = LanceScan.rowSize(spec.outputSchema.fields.toSeq)
    val inWidth = LanceScan.rowSize(rows.readSchema().fields.toSeq)
    val count =
      if (spec.groups.nonEmpty) in.numRows().orElse(Long.MaxValue)
      else math.max(1, toBatch.planInputPartitions().length).toLong
    val bytes =
      if (spec.groups.isEmpty) count * outWidth
      else {
        val scaled = BigInt(in.sizeInBytes().orElse(Long.MaxValue)) * outWidth / inWidth
        (scaled min BigInt(Long.MaxValue)).toLong
      }
    new Statistics {
      override def numRows(): OptionalLong = OptionalLong.of(count)
      override def sizeInBytes(): OptionalLong = OptionalLong.of(math.max(1L, bytes))
    }
  }
}

object LanceAggregateScan {

  /** Equal when the row batches and the aggregations are (exchange reuse). */
  final class AggregateBatch(val rows: Batch, val spec: PartialAggregate) extends Batch {
    override def equals(o: Any): Boolean = o match {
      case b: AggregateBatch => rows == b.rows && spec == b.spec
      case _ => false
    }
    override def hashCode(): Int = (rows, spec).hashCode()

    /** Without groups, an empty table still gives one partial row (COUNT 0), as Spark's. */
    override def planInputPartitions(): Array[InputPartition] = {
      val parts = rows.planInputPartitions()
      if (parts.nonEmpty || spec.groups.nonEmpty) parts
      else Array(LanceInputPartition(Array.empty))
    }

    override def createReaderFactory(): PartitionReaderFactory =
      new Factory(rows.createReaderFactory(), spec)
  }

  private final class Factory(rows: PartitionReaderFactory, spec: PartialAggregate)
      extends PartitionReaderFactory {
    override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
      new Reader(rows.createColumnarReader(partition), spec)
  }

  private final class Reader(rows: PartitionReader[ColumnarBatch], spec: PartialAggregate)
      extends PartitionReader[InternalRow] {
    private val agg = new PartialAggregator(spec)

    /** Rows handed out and not read yet: read before the next batch goes in. */
    private var pending: Iterator[InternalRow] = Iterator.empty
    private var done = false
    private var current: InternalRow = _
    override def next(): Boolean = {
      while (!pending.hasNext) {
        if (done) return false
        if (rows.next()) pending = agg.add(rows.get())
        else { done = true; pending = agg.result() }
      }
      current = pending.next()
      true
    }
    override def get(): InternalRow = current
    override def close(): Unit = rows.close()
    override def currentMetricsValues(): Array[CustomTaskMetric] = rows.currentMetricsValues()
  }
}
