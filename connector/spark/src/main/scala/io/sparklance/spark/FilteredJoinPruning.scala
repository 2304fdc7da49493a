package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{
  Attribute,
  AttributeSet,
  PredicateHelper,
  SubqueryExpression
}
import org.apache.spark.sql.catalyst.optimizer.JoinSelectionHelper
import org.apache.spark.sql.catalyst.plans.{InnerLike, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, Join, LeafNode, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.internal.SQLConf

import io.sparklance.spark.shims.SparkLineShims

/**
 * Dynamic pruning of a large Lance table by the keys of a filtered Lance table, too large to
 * broadcast, that it is joined with (TPC-H q3, q5, q10: `lineitem` joined on `l_orderkey =
 * o_orderkey` with `orders` of one year or quarter, and their customers). Spark's own dynamic
 * pruning uses only a broadcast of the other side of the join
 * (`spark.sql.optimizer.dynamicPartitionPruning.reuseBroadcastOnly`), and `orders` is planned
 * as a shuffle join; so all of `lineitem` is read and shuffled (q5: 6 million rows, 240 MB,
 * where 0.9 million join). This rule adds Spark's dynamic pruning filter by the other side's
 * keys to the large table's read as a subquery of its own, as [[JoinedKeyPruning]] does: Spark
 * evaluates `SELECT DISTINCT y FROM <other side>` once, reading that side a second time, and
 * hands the keys to [[LanceScan]] as a runtime `IN` filter.
 *
 * For an inner join on `x = y`:
 *  - `x` comes from a Lance relation `L` larger than the broadcast threshold, reached through
 *    deterministic projections and filters and joins each of whose output rows comes from one
 *    of its rows, and not pruned by `x` already; nor is `L` joined on that side with a
 *    selective small Lance table (as q8's `lineitem` with `part`: Spark prunes it through that
 *    table's broadcast, for less than a second read of the other side costs);
 *  - the other side is deterministic, without subqueries, reads only Lance relations, at most
 *    half as many bytes in all as `L`, is too large to broadcast, and `y` comes from one of
 *    its relations with a likely selective filter right over it (comparisons, IN, LIKE: not
 *    only `IS NOT NULL`), reached the same way: the keys are a share of that table's.
 * Runs before scan push-down, once, after [[JoinedKeyPruning]]; a no-op where that rule is.
 */
object FilteredJoinPruning extends Rule[LogicalPlan] with PredicateHelper
    with JoinSelectionHelper {
  override def apply(plan: LogicalPlan): LogicalPlan =
    JoinedKeyPruning.rewriteInnerJoins(plan) { (side, x, other, y) =>
      pruned(side, x, other, y).getOrElse(side)
    }

  /** `side` with the large relation `x` comes from pruned by `y`'s values in `other`. */
  private def pruned(
      side: LogicalPlan,
      x: Attribute,
      other: LogicalPlan,
      y: Attribute
  ): Option[LogicalPlan] =
    lanceBytes(other).filter(_ =>
      selectiveKey(other, y) &&
        !canBroadcastBySize(other, SQLConf.get)
    ).flatMap { otherBytes =>
      JoinedKeyPruning.withPruning(
        side,
        x,
        SparkLineShims.pruningSubquery(x, ExistsPruning.optimized(Project(Seq(y), other)), y),
        t =>
          t.estimatedBytes > SQLConf.get.autoBroadcastJoinThreshold &&
            t.estimatedBytes / 2 >= otherBytes && !joinedWithSmallSelective(side, t)
      )
    }

  /**
   * The bytes of the Lance relations `plan` reads, when it reads only those, through
   * deterministic operators without subqueries.
   */
  private def lanceBytes(plan: LogicalPlan): Option[Long] = {
    val plain = !plan.exists {
      case r: DataSourceV2Relation => !r.table.isInstanceOf[LanceTable]
      case _: LeafNode => true
      case p => p.expressions.exists(e => !e.deterministic || SubqueryExpression.hasSubquery(e))
    }
    if (!plain) None
    else Some(plan.collect { case r: DataSourceV2Relation =>
      r.table.asInstanceOf[LanceTable].estimatedBytes
    }.sum)
  }

  /** Whether `y` comes from a relation with a likely selective filter right over it. */
  private def selectiveKey(plan: LogicalPlan, y: Attribute): Boolean = plan match {
    case Project(list, child) => JoinedKeyPruning.passesOn(list, y) && selectiveKey(child, y)
    case Filter(c, r: DataSourceV2Relation) =>
      r.outputSet.contains(y) && splitConjunctivePredicates(c).exists(isLikelySelective)
    case Filter(_, child) => selectiveKey(child, y)
    case Join(l, r, joinType, _, _) =>
      val onLeft = l.outputSet.contains(y)
      JoinedKeyPruning.keeps(joinType, onLeft) && selectiveKey(if (onLeft) l else r, y)
    case _ => false
  }

  /**
   * Whether a join in `side` equates a column of `table`'s relation with the keys of a
   * selective small Lance table (see [[SemiJoinReduction]]): Spark prunes it by those.
   */
  private def joinedWithSmallSelective(side: LogicalPlan, table: LanceTable): Boolean = {
    val columns = AttributeSet(side.collect {
      case r: DataSourceV2Relation if r.table eq table => r.output
    }.flatten)
    side.exists {
      case Join(l, r, _: InnerLike | LeftSemi, Some(cond), _) =>
        SemiJoinReduction.equalities(Seq(cond)).exists { case (a, b) =>
          columns.contains(a) && (
            (l.outputSet.contains(a) && r.outputSet.contains(b) &&
              SemiJoinReduction.source(r, b).isDefined) ||
              (r.outputSet.contains(a) && l.outputSet.contains(b) &&
                SemiJoinReduction.source(l, b).isDefined)
          )
        }
      case _ => false
    }
  }
}
