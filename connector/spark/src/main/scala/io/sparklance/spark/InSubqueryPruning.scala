package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  DynamicPruningSubquery,
  InSubquery,
  ListQuery,
  PredicateHelper
}
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.internal.SQLConf

import io.sparklance.spark.shims.SparkLineShims

/**
 * Dynamic pruning of a Lance scan by the result of an uncorrelated `IN` subquery that keeps
 * few groups of an aggregation (TPC-H q18: `o_orderkey IN (SELECT l_orderkey FROM lineitem
 * GROUP BY l_orderkey HAVING sum(l_quantity) > 300)`, which keeps 57 of 1.5 million orders).
 *
 * Spark turns the subquery into a semi join after scan push-down and prunes a scan by a join
 * only through a broadcast it can reuse; the aggregation is too large to broadcast at planning
 * time, so the whole table is scanned, shuffled and sorted to meet a handful of keys. This
 * rule adds Spark's own dynamic pruning filter beside the `IN` predicate, not bound to a
 * broadcast: at run time Spark evaluates the subquery once more (an adaptive plan may reuse
 * the semi join's shuffle of it) and hands the keys to [[LanceScan]] as a runtime `IN` filter.
 * The `IN` predicate stays, so the answer is the same whatever the runtime filter prunes.
 *
 * Applies where the filter sits on a Lance relation and the subquery is deterministic (it runs
 * twice and must give the same keys), returns one column of the key's type and ends in a
 * selective filter over an aggregation (a HAVING clause); a no-op when dynamic pruning is off.
 * It does not wait for a broadcast whatever `...dynamicPartitionPruning.reuseBroadcastOnly`
 * says (that setting bounds Spark's own pruning); `spark.sql.optimizer.excludedRules=
 * io.sparklance.spark.InSubqueryPruning` turns it off alone.
 */
object InSubqueryPruning extends Rule[LogicalPlan] with PredicateHelper {
  override def apply(plan: LogicalPlan): LogicalPlan =
    if (!SQLConf.get.dynamicPartitionPruningEnabled) plan
    else plan.transformUp {
      case f @ Filter(condition, child) if readsLance(child) =>
        val conjuncts = splitConjunctivePredicates(condition)
        val pruned = conjuncts.collect {
          case d: DynamicPruningSubquery => d.pruningKey.canonicalized
        }
        val added = conjuncts.collect {
          case InSubquery(Seq(key: Attribute), q: ListQuery)
              if q.outerAttrs.isEmpty && q.plan.output.size == 1 &&
                q.plan.output.head.dataType == key.dataType && q.plan.deterministic &&
                child.outputSet.contains(key) && fewGroups(q.plan) &&
                !pruned.contains(key.canonicalized) =>
            SparkLineShims.pruningSubquery(key, q.plan, q.plan.output.head)
        }
        if (added.isEmpty) f else f.copy(condition = (conjuncts ++ added).reduce(And))
    }

  /** `p` is a Lance relation, under projections and filters. */
  private def readsLance(p: LogicalPlan): Boolean = p match {
    case Project(_, child) => readsLance(child)
    case Filter(_, child) => readsLance(child)
    case r: DataSourceV2Relation => r.table.isInstanceOf[LanceTable]
    case _ => false
  }

  /** `p` ends (under projections) in a likely selective filter over an aggregation. */
  private def fewGroups(p: LogicalPlan): Boolean = p match {
    case Project(_, child) => fewGroups(child)
    case Filter(c, _: Aggregate) => isLikelySelective(c)
    case Filter(c, Project(_, _: Aggregate)) => isLikelySelective(c)
    case _ => false
  }
}
