package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{Alias, Attribute, AttributeMap, EqualTo,
  PredicateHelper, SubqueryExpression}
import org.apache.spark.sql.catalyst.optimizer.JoinSelectionHelper
import org.apache.spark.sql.catalyst.plans.LeftSemi
import org.apache.spark.sql.catalyst.plans.logical.{Aggregate, Filter, Join, JoinHint,
  LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation,
  DataSourceV2ScanRelation}
import org.apache.spark.sql.internal.SQLConf

/**
 * Semi-join reduction of an aggregated Lance scan by a selective small Lance table.
 *
 * In `X JOIN (SELECT k, agg(...) FROM big GROUP BY k) ON x = k`, where `x` is a column of a
 * small Lance table that `X` filters selectively (TPC-H q17: `part` by brand and container;
 * q2: by size and type) and reaches the join unchanged through inner or outer joins,
 * projections and filters, only groups whose `k` is among that table's filtered keys can
 * join. This rule filters the aggregate's input by them: `big LEFT SEMI JOIN (SELECT x FROM
 * small WHERE ...) ON k = x`. Spark broadcasts the small side, so the aggregation sees only
 * the matching rows, and with [[KeepFiltersForPruning]] its dynamic pruning hands the keys to
 * the Lance scan of `big` as a runtime filter (see [[LanceScan]]).
 *
 * Applies only where the aggregate reads a Lance table, the join keeps only matching rows of
 * the aggregated side (inner, left semi, or outer on the other side), and the small table is
 * small as [[KeepFiltersForPruning]] judges it; a no-op when dynamic pruning or broadcasts
 * are off.
 */
object SemiJoinReduction extends Rule[LogicalPlan] with PredicateHelper with JoinSelectionHelper {
  /** Marks the semi joins this rule made (see `reduced`). */
  private val Made = TreeNodeTag[Unit]("spark-lance.semi-join-reduction")

  override def apply(plan: LogicalPlan): LogicalPlan = {
    val conf = SQLConf.get
    if (!conf.dynamicPartitionPruningEnabled || conf.autoBroadcastJoinThreshold <= 0) plan
    else plan.transformUp {
      case j @ Join(left, right, joinType, Some(cond), _) =>
        var newLeft = left
        var newRight = right
        splitConjunctivePredicates(cond).foreach {
          case EqualTo(a: Attribute, b: Attribute) =>
            val (l, r) = if (left.outputSet.contains(a) && right.outputSet.contains(b)) (a, b)
              else (b, a)
            if (left.outputSet.contains(l) && right.outputSet.contains(r)) {
              if (canPruneRight(joinType)) {
                source(left, l).flatMap(s => reduce(newRight, r, s)).foreach(newRight = _)
              }
              if (canPruneLeft(joinType)) {
                source(right, r).flatMap(s => reduce(newLeft, l, s)).foreach(newLeft = _)
              }
            }
          case _ =>
        }
        if ((newLeft eq left) && (newRight eq right)) j
        else j.copy(left = newLeft, right = newRight)
    }
  }

  /**
   * Where `attr`'s values in `side` come from: a chain of filters, one of them selective, over
   * a small Lance relation holding `attr`, reached through projections that pass `attr` on,
   * filters and joins. The values of `attr` in `side` are then among the chain's.
   */
  private def source(side: LogicalPlan, attr: Attribute): Option[(LogicalPlan, Attribute)] =
    side match {
      case Project(list, child) if list.exists {
          case a: Attribute => a.exprId == attr.exprId
          case _ => false
        } => source(child, attr)
      case f @ Filter(_, child) =>
        if (filteredRelation(f, attr)) Some(f -> attr) else source(child, attr)
      case Join(l, r, _, _, _) =>
        if (l.outputSet.contains(attr)) source(l, attr)
        else if (r.outputSet.contains(attr)) source(r, attr)
        else None
      case _ => None
    }

  /**
   * `f` is deterministic filters only, one likely selective, over a small Lance relation with
   * `attr`.
   */
  private def filteredRelation(f: Filter, attr: Attribute): Boolean = {
    def down(p: LogicalPlan, selective: Boolean): Boolean = p match {
      // Copied conditions must give the same rows again: deterministic, no subqueries.
      case Filter(c, child) if c.deterministic && !SubqueryExpression.hasSubquery(c) =>
        down(child, selective || isLikelySelective(c))
      case r: DataSourceV2Relation => selective && r.outputSet.contains(attr) && (r.table match {
        case t: LanceTable => KeepFiltersForPruning.small(t, SQLConf.get.autoBroadcastJoinThreshold)
        case _ => false
      })
      case _ => false
    }
    down(f, selective = false)
  }

  /**
   * `side` (projections and filters over an aggregate grouped by `key`, reading a Lance
   * table) with the aggregate's input semi-joined with a fresh copy of `source`.
   */
  private def reduce(side: LogicalPlan, key: Attribute,
      source: (LogicalPlan, Attribute)): Option[LogicalPlan] = side match {
    case p @ Project(list, child) =>
      list.collectFirst {
        case a: Attribute if a.exprId == key.exprId => a
        case al @ Alias(a: Attribute, _) if al.exprId == key.exprId => a
      }.flatMap(k => reduce(child, k, source)).map(c => p.copy(child = c))
    case f @ Filter(_, child) => reduce(child, key, source).map(c => f.copy(child = c))
    case a: Aggregate =>
      val (grouping, outputs, child) = (a.groupingExpressions, a.aggregateExpressions, a.child)
      val grouped = outputs.collectFirst {
        case x: Attribute if x.exprId == key.exprId => x
        case al @ Alias(x: Attribute, _) if al.exprId == key.exprId => x
      }.filter(g => grouping.exists {
        case x: Attribute => x.exprId == g.exprId
        case _ => false
      })
      // A subquery's plan (q17's correlated average) was pushed down before it became a join.
      val readsLance = child.exists {
        case r: DataSourceV2Relation => r.table.isInstanceOf[LanceTable]
        case s: DataSourceV2ScanRelation => s.scan.isInstanceOf[LanceScan]
        case _ => false
      }
      // Made before: later rules may push the semi join down, but it keeps naming the key.
      def reduced(g: Attribute): Boolean = child.exists {
        case j @ Join(_, _, LeftSemi, Some(c), _) =>
          j.getTagValue(Made).isDefined || c.references.contains(g)
        case _ => false
      }
      grouped.filter(g => readsLance && child.outputSet.contains(g) && !reduced(g))
        .map { g =>
          val (keys, keyAttr) = freshCopy(source)
          val semi = Join(child, keys, LeftSemi, Some(EqualTo(g, keyAttr)), JoinHint.NONE)
          semi.setTagValue(Made, ())
          a.withNewChildren(Seq(semi))
        }
    case _ => None
  }

  /** `SELECT attr FROM <filters over relation>` with new attribute ids, and the new `attr`. */
  private def freshCopy(source: (LogicalPlan, Attribute)): (LogicalPlan, Attribute) = {
    val (chain, attr) = source
    val relation = chain.collectFirst { case r: DataSourceV2Relation => r }.get
    val fresh = relation.newInstance()
    val ids = AttributeMap(relation.output.zip(fresh.output))
    val copied = chain.transformUp {
      case r: DataSourceV2Relation if r eq relation => fresh
      case other => other.transformExpressions { case x: Attribute => ids.getOrElse(x, x) }
    }
    val key = ids(attr)
    (Project(Seq(key), copied), key)
  }
}
