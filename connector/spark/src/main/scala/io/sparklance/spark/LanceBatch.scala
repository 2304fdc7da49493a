package io.sparklance.spark

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{Batch, InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.types.StructType

import io.sparklance.format.LanceField
import io.sparklance.table.{FragmentRef, RowFilter}

/**
 * The physical side of a [[LanceScan]]: partitions and the reader factory. Two batches are
 * equal when they read the same version of the same dataset, the same fragments, columns
 * and pushed predicates with the same options, as Spark's FileScan and Iceberg's SparkBatch
 * define it, so Spark reuses one exchange or subquery for both (ReusedExchange).
 *
 * @param planFields every field the tasks decode (projected plus filter-only ones)
 * @param pushed     the pushed predicates as text and the runtime ones translated: what makes
 *                   two filters the same
 */
final class LanceBatch(
    table: LanceTable,
    fragments: Seq[FragmentRef],
    fields: Seq[LanceField],
    planFields: Seq[LanceField],
    required: StructType,
    filter: Option[LanceColumnarReader.FilterSpec],
    countRows: Boolean,
    metadata: LanceColumnarReader.MetadataSpec,
    pushed: Seq[Any],
    limit: Option[Int] = None,
    offset: Int = 0,
    topN: Option[TopNSpec] = None,
    perCore: Boolean = false
) extends Batch {

  private def key: Seq[Any] = Seq(
    table.snapshot.root,
    table.snapshot.version,
    required,
    countRows,
    pushed,
    fragments.map(_.id),
    table.options.batchSize,
    table.options.splitSizeBytes,
    table.options.splitSizeGiven,
    metadata.columns.map(_._2.name),
    limit,
    offset,
    topN,
    perCore
  )

  override def equals(other: Any): Boolean = other match {
    case b: LanceBatch => key == b.key
    case _ => false
  }

  override def hashCode(): Int = key.hashCode()

  /**
   * Partitions of at most `split_size` bytes; without an explicit `split_size`, Spark's rule
   * for file sources: `min(maxPartitionBytes, max(openCostInBytes, total / parallelism))`,
   * where total counts every fragment's bytes plus the open cost, so small datasets still
   * use every core; then made a little smaller where that evens the tasks out over the cores
   * ([[SplitPlanner.defaultTarget]]). With `perCore` (rows for a grouping of nearly distinct
   * keys, see [[GroupingSampler]]), one split per core instead, as long as no task reads more
   * than `maxPartitionBytes` of the columns it decodes ([[SplitPlanner.perCoreTarget]]).
   */
  override def planInputPartitions(): Array[InputPartition] = {
    val openCost = LanceTables.openCostBytes
    val target =
      if (table.options.splitSizeGiven) table.options.splitSizeBytes
      else {
        val spark = SparkSession.active
        val parallelism = spark.sessionState.conf.filesMinPartitionNum
          .getOrElse(spark.sparkContext.defaultParallelism)
        val total = fragments.map(f => SplitPlanner.estimatedBytes(f) + openCost).sum
        if (perCore) SplitPlanner.perCoreTarget(
          total,
          table.options.splitSizeBytes,
          parallelism,
          openCost,
          readShare
        )
        else SplitPlanner.defaultTarget(total, table.options.splitSizeBytes, parallelism, openCost)
      }
    val parts = SplitPlanner.plan(table.io, fragments, target, openCost, planFields)
    val withFilter =
      if (shared.isDefined) parts.map(_.copy(shared = shared))
      else parts.map(_.copy(filter = filter))
    withFilter.toArray
  }

  /**
   * The share of a row's bytes the tasks decode, by the columns' default sizes as Spark's
   * file sources scale their statistics ([[LanceScan.defaultWidth]]).
   */
  private def readShare: Double = {
    val all = table.schema().fields.toSeq
    val read = LanceScan.defaultWidth(all.filter(f => planFields.exists(_.name == f.name)))
    math.min(1.0, math.max(1L, read).toDouble / math.max(1L, LanceScan.defaultWidth(all)))
  }

  /** A filter of more than [[LanceBatch.SharedValues]] literals, broadcast once. */
  private lazy val shared: Option[Broadcast[LanceColumnarReader.FilterSpec]] =
    filter.filter(f => LanceBatch.literals(f.filter) > LanceBatch.SharedValues)
      .map(f => SparkSession.active.sparkContext.broadcast(f))

  override def createReaderFactory(): PartitionReaderFactory = {
    new LancePartitionReaderFactory(
      table.tasksIo(),
      fields,
      required,
      table.options.batchSize,
      countRows,
      metadata,
      limit,
      topN
    )
  }
}

object LanceBatch {

  /** Filters with more literal values than this are broadcast rather than put in each task. */
  val SharedValues = 1000

  private[spark] def literals(f: RowFilter): Int = f match {
    case RowFilter.And(l, r) => literals(l) + literals(r)
    case RowFilter.Or(l, r) => literals(l) + literals(r)
    case RowFilter.In(_, values, _) => values.size
    case _ => 1
  }
}
