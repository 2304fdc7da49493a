package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.PredicateHelper
import org.apache.spark.sql.catalyst.plans.{Inner, JoinType, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LogicalPlan, Project, Subquery}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * Lets Spark's dynamic partition pruning filter a Lance scan by the keys of a selective
 * Lance table on the other side of a join (TPC-H q17: `part` filtered by brand and container,
 * joined with `lineitem` on the part key).
 *
 * Spark inserts a dynamic pruning filter only when the other side of the join still holds a
 * `Filter` with a selective condition. A Lance scan evaluates its pushed predicates exactly,
 * so Spark drops that `Filter`. This rule marks the Lance relations (by a scan option) that
 * are filtered, sit on a join side that can filter the other or are the whole plan of a
 * subquery (IN and EXISTS become joins later), and are small enough for a column of them to
 * be broadcast: the only case where Spark's pruning applies, as it reuses the broadcast of
 * the filtering side. Their scan
 * still evaluates the predicates, and Spark evaluates them again on the (few) rows it gets.
 * Runs before scan push-down; a no-op when dynamic pruning or broadcasts are off.
 */
object KeepFiltersForPruning extends Rule[LogicalPlan] with PredicateHelper {

  /** The scan option carrying the mark (internal: not a user option). */
  val Mark = "__spark_lance_keep_filters"

  def marked(options: CaseInsensitiveStringMap): Boolean = options.getBoolean(Mark, false)

  override def apply(plan: LogicalPlan): LogicalPlan = {
    val conf = SQLConf.get
    if (!conf.dynamicPartitionPruningEnabled || conf.autoBroadcastJoinThreshold <= 0) plan
    else {
      val limit = conf.autoBroadcastJoinThreshold
      val marked = plan match {
        case s: Subquery => s.copy(child = markSide(s.child, limit))
        case other => other
      }
      marked.transformUp {
        case j: Join =>
          val l = if (filtersRight(j.joinType)) markSide(j.left, limit) else j.left
          val r = if (filtersLeft(j.joinType)) markSide(j.right, limit) else j.right
          if ((l eq j.left) && (r eq j.right)) j else j.copy(left = l, right = r)
      }
    }
  }

  /**
   * Whether Spark's pruning can filter a join's right side by its left (the join types for
   * which Spark prunes the right), and its left by its right: only those sides are marked
   * (the `orders` of q13's `customer LEFT JOIN orders` filters nothing).
   */
  private def filtersRight(t: JoinType): Boolean = t == Inner || t == LeftOuter
  private def filtersLeft(t: JoinType): Boolean = t == Inner || t == LeftSemi || t == RightOuter

  /** `side` with its Lance relation marked when a selective filter sits above it. */
  private def markSide(side: LogicalPlan, limit: Long): LogicalPlan = {
    def walk(p: LogicalPlan, filtered: Boolean): LogicalPlan = p match {
      case pr @ Project(_, child) =>
        val c = walk(child, filtered)
        if (c eq child) pr else pr.copy(child = c)
      case f @ Filter(cond, child) =>
        val c = walk(child, filtered || isLikelySelective(cond))
        if (c eq child) f else f.copy(child = c)
      case r: DataSourceV2Relation if filtered && !marked(r.options) && (r.table match {
            case t: LanceTable => small(t, limit)
            case _ => false
          }) =>
        RelationMarks.withOption(r, Mark, "true")
      case other => other
    }
    walk(side, filtered = false)
  }

  /** Whether one column's share of the table's bytes is under the broadcast threshold. */
  def small(t: LanceTable, limit: Long): Boolean =
    t.estimatedBytes / math.max(1, t.schema().fields.length) <= limit
}
