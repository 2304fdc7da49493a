package io.sparklance.spark

import scala.util.control.NonFatal

import org.apache.spark.sql.types.StructType
import org.slf4j.LoggerFactory

import io.sparklance.spark.aggregate.{AggFn, GroupSample, PartialAggregate, PartialAggregator}
import io.sparklance.table.RowFilter
import io.sparklance.table.index.IndexPruning

/**
 * Whether a grouped aggregation is worth computing in the scan. A task that folds its rows
 * into nearly as many groups saves Spark nothing (Spark aggregates the partials again) and
 * costs a hash table and a row per group: the grouping of TPC-H q20's subquery run on its
 * own (`l_partkey, l_suppkey` of a year of lineitem, about 140k groups from 145k rows per
 * task) took 8% longer in the scan than in Spark. So the planner reads the grouping columns of the
 * first [[SampleRows]] rows of the first task (with the pushed filter, on the driver) and
 * pushes the grouping only when a task's rows are expected to fold into at most
 * `aggregate_pushdown_group_share` groups per row ([[GroupSample]]).
 */
private[spark] object GroupingSampler {

  /** Physical rows read for the sample: a few batches of the grouping columns. */
  val SampleRows: Long = 1L << 16

  private val log = LoggerFactory.getLogger(getClass)

  /**
   * Whether each task should compute `spec` (grouped): yes without a grouping, with a share
   * of 1, with a filter of many literals, when the scan reads no row, or when the sample
   * cannot be read on the driver (the tasks then read, or fail, as they would anyway).
   */
  def worthPushing(
      table: LanceTable,
      spec: PartialAggregate,
      filter: Option[RowFilter],
      pushed: Seq[String],
      fragmentTest: Option[Long => Boolean],
      addressed: Option[IndexPruning.Candidates]
  ): Boolean = {
    val maxShare = table.options.aggregateGroupShare
    // A filter of many literals would be broadcast to plan the sample's task: not worth it.
    if (
      spec.groups.isEmpty || maxShare >= 1.0 ||
      filter.exists(f => LanceBatch.literals(f) > LanceBatch.SharedValues)
    ) return true
    val found =
      try sample(table, spec, filter, pushed, fragmentTest, addressed)
      catch {
        case NonFatal(e) =>
          log.debug(s"Sampling the grouping of ${table.name()} failed; pushing it", e)
          None
      }
    found.forall { case (s, taskRows) =>
      val share = s.groupShare(taskRows)
      val push = share <= maxShare
      if (!push) log.info(f"Leaving the grouping by ${spec.groups.map(_.name).mkString(", ")}" +
        f" of ${table.name()} to Spark: about $share%.2f groups per row expected in a task" +
        f" of ${taskRows.toLong} rows (${s.groups} keys in a sample of ${s.kept})")
      push
    }
  }

  /** The sample and the rows of the task it comes from, or None when no row is read. */
  private def sample(
      table: LanceTable,
      spec: PartialAggregate,
      filter: Option[RowFilter],
      pushed: Seq[String],
      fragmentTest: Option[Long => Boolean],
      addressed: Option[IndexPruning.Candidates]
  ): Option[(GroupSample, Double)] = {
    val names = spec.groups.map(_.name).distinct
    val schema = StructType(names.map(n => spec.input(n)))
    val scan = new LanceScan(
      table,
      schema,
      filter,
      pushed,
      countRows = false,
      fragmentTest,
      addressed = addressed
    )
    val first = scan.toBatch.planInputPartitions().collectFirst {
      case p: LanceInputPartition if p.slices.nonEmpty => p
    }
    first.map { task =>
      val s = task.slices.head
      val part = task.copy(slices = Array(s.copy(end = math.min(s.end, s.start + SampleRows))))
      val read = part.slices.head.end - s.start
      val fields = names.map(n =>
        table.snapshot.schema.field(n).getOrElse(
          throw new IllegalStateException(s"grouping column '$n' is not in ${table.name()}")
        )
      )
      val keys = PartialAggregate(
        schema,
        spec.groups.map(g => g.copy(ordinal = names.indexOf(g.name))),
        Seq(AggFn.CountAll)
      )
      val counts = new PartialAggregator(keys)
      val reader = new LanceColumnarReader(
        table.io,
        part,
        fields,
        schema,
        table.options.batchSize,
        part.rowFilter
      )
      val seen = new scala.collection.mutable.ArrayBuilder.ofLong
      val at = keys.groups.size // the count follows the keys
      try {
        while (reader.next()) counts.add(reader.get()).foreach(r => seen += r.getLong(at))
        counts.result().foreach(r => seen += r.getLong(at))
      } finally reader.close()
      val sample = GroupSample.of(seen.result().iterator)
      val taskRows = task.slices.map(x => (x.end - x.start).toDouble).sum *
        sample.kept / math.max(1L, read)
      sample -> taskRows
    }
  }
}
