package io.sparklance.spark

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  DynamicPruningSubquery,
  Exists,
  Expression,
  Not,
  PredicateHelper,
  SubqueryExpression
}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project, Subquery}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation
import org.apache.spark.sql.internal.SQLConf

import io.sparklance.spark.shims.SparkLineShims

/**
 * Dynamic pruning of the Lance scan of an EXISTS / NOT EXISTS subquery by the keys of the
 * selective small Lance table it is correlated with (TPC-H q4: `EXISTS (SELECT * FROM lineitem
 * WHERE l_orderkey = o_orderkey AND …)` for the orders of one quarter, 58 thousand of 1.5
 * million).
 *
 * Spark rewrites the subquery into a semi (anti) join after scan push-down, and prunes a scan
 * by a join only on the join's left side; the subquery's whole table is scanned, shuffled and
 * sorted to meet a few keys. Only subquery rows whose key is among the outer rows' can match
 * one, so this rule adds to the subquery's scan Spark's own dynamic pruning filter by the outer
 * side's keys, not bound to a broadcast: at run time Spark reads the outer side (a small
 * table's filtered scan) once more and hands its keys to [[LanceScan]] as a runtime `IN`
 * filter. Whether a subquery finds a row is the same for every outer row.
 *
 * Applies where the outer side is deterministic filters, one likely selective, over a Lance
 * table small as [[KeepFiltersForPruning]] judges it, and the subquery's join condition equates
 * one of its Lance scan's columns with an outer column; a no-op when dynamic pruning or
 * broadcasts are off.
 */
object ExistsPruning extends Rule[LogicalPlan] with PredicateHelper {
  override def apply(plan: LogicalPlan): LogicalPlan = {
    val conf = SQLConf.get
    if (!conf.dynamicPartitionPruningEnabled || conf.autoBroadcastJoinThreshold <= 0) plan
    else plan.transformUp {
      case f @ Filter(condition, _) if SubqueryExpression.hasSubquery(condition) =>
        withExistsPruned(
          f,
          {
            // The outer side is deterministic filters over a small relation holding `o`.
            case (outer: Filter, o) => SemiJoinReduction.filteredRelation(outer, o)
            case _ => false
          }
        )
    }
  }

  /**
   * `f` with the Lance scans of its EXISTS / NOT EXISTS conjuncts pruned by the keys of the
   * rows they are evaluated on (`f`'s input, filtered by its conjuncts without subqueries),
   * where `eligible` holds for that input and the key column.
   */
  private[spark] def withExistsPruned(
      f: Filter,
      eligible: (LogicalPlan, Attribute) => Boolean
  ): Filter = {
    val conjuncts = splitConjunctivePredicates(f.condition)
    lazy val outer = conjuncts.filterNot(SubqueryExpression.hasSubquery) match {
      case Seq() => f.child
      case rest => Filter(rest.reduce(And), f.child)
    }
    val pruned = conjuncts.map {
      case e: Exists => prune(e, outer, eligible).getOrElse(e)
      case n @ Not(e: Exists) => prune(e, outer, eligible).map(Not(_)).getOrElse(n)
      case other => other
    }
    if (pruned.zip(conjuncts).forall { case (a, b) => a eq b }) f
    else f.copy(condition = pruned.reduce(And))
  }

  /** `e` with its Lance scan filtered by the keys of `outer` it is correlated with. */
  private def prune(
      e: Exists,
      outer: LogicalPlan,
      eligible: (LogicalPlan, Attribute) => Boolean
  ): Option[Exists] = {
    val inner = e.plan.outputSet
    SemiJoinReduction.equalities(e.joinCond).collectFirst {
      case (i, o) if inner.contains(i) && eligible(outer, o) => (i, o)
    }.flatMap { case (i, o) =>
      lazy val build = optimized(Project(Seq(o), outer))
      withPruning(e.plan, i, SparkLineShims.pruningSubquery(i, build, o))
    }.map(e.withNewPlan)
  }

  /** `plan` (projections and filters over a Lance scan with `key`) with `pruning` on the scan. */
  private def withPruning(
      plan: LogicalPlan,
      key: Attribute,
      pruning: => Expression
  ): Option[LogicalPlan] = plan match {
    case p @ Project(list, child) if SemiJoinReduction.passesOn(list, key) =>
      withPruning(child, key, pruning).map(c => p.copy(child = c))
    case Filter(c, _) if c.exists(_.isInstanceOf[DynamicPruningSubquery]) => None
    case f @ Filter(_, child) => withPruning(child, key, pruning).map(c => f.copy(child = c))
    case s: DataSourceV2ScanRelation
        if s.scan.isInstanceOf[LanceScan] &&
          s.outputSet.contains(key) =>
      Some(Filter(pruning, s))
    case _ => None
  }

  /**
   * `plan` through the session's optimizer, scan push-down included, as Spark optimizes a
   * subquery: the subquery's own plan was optimized before this rule runs, but the outer side
   * is not yet.
   */
  private[spark] def optimized(plan: LogicalPlan): LogicalPlan =
    SparkSession.active.sessionState.optimizer.execute(Subquery(plan, correlated = false)) match {
      case Subquery(child, _) => child
      case other => other
    }
}
