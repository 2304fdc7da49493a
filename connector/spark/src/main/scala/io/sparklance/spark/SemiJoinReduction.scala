package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{
  Alias,
  Attribute,
  AttributeMap,
  EqualTo,
  Expression,
  NamedExpression,
  PredicateHelper,
  SubqueryExpression
}
import org.apache.spark.sql.catalyst.optimizer.JoinSelectionHelper
import org.apache.spark.sql.catalyst.plans.{InnerLike, JoinType, LeftOuter, LeftSemi, RightOuter}
import org.apache.spark.sql.catalyst.plans.logical.{
  Aggregate,
  Filter,
  Join,
  JoinHint,
  LogicalPlan,
  Project
}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreeNodeTag
import org.apache.spark.sql.execution.datasources.v2.{
  DataSourceV2Relation,
  DataSourceV2ScanRelation
}
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
 * The same holds for a plain Lance relation joined on a key that a join on the other side
 * equates with the small table's (TPC-H q9: `partsupp` joined on `l_partkey`, which equals
 * `p_partkey` of `part` filtered by name). Spark prunes a scan only through a broadcast of the
 * other side of its join, here a join of large tables; the semi join with the small table's
 * keys is broadcast instead, and prunes the scan the same way.
 *
 * Applies only where the aggregate or relation reads a Lance table, the join keeps only
 * matching rows of the reduced side (inner, left semi, or outer on the other side), and the
 * small table is small as [[KeepFiltersForPruning]] judges it; a no-op when dynamic pruning
 * or broadcasts are off.
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
                source(left, l)
                  .flatMap(k => reduce(newRight, r, k, semiJoinsRelation(joinType, k, left)))
                  .foreach(newRight = _)
              }
              if (canPruneLeft(joinType)) {
                source(right, r)
                  .flatMap(k => reduce(newLeft, l, k, semiJoinsRelation(joinType, k, right)))
                  .foreach(newLeft = _)
              }
            }
          case _ =>
        }
        if ((newLeft eq left) && (newRight eq right)) j
        else j.copy(left = newLeft, right = newRight)
    }
  }

  /**
   * Whether a plain relation on one side of a join of type `joinType` is semi-joined with
   * `keys` from the `other` side: only keys found through another join (Spark prunes the
   * direct case itself, through a broadcast of `other`), not on a semi join (it filters the
   * side already), and only when `other` is too large to broadcast.
   */
  private def semiJoinsRelation(joinType: JoinType, keys: Keys, other: LogicalPlan): Boolean =
    keys.hopped && joinType != LeftSemi && !canBroadcastBySize(other, SQLConf.get)

  /**
   * Where `attr`'s values in `side` come from: a chain of filters, one of them selective, over
   * a small Lance relation holding `attr` (or an attribute a join equates with it), reached
   * through projections that pass `attr` on, filters and joins. The values of `attr` in `side`
   * are then among the chain's.
   */
  private[spark] def source(side: LogicalPlan, attr: Attribute): Option[Keys] =
    side match {
      case Project(list, child) if passesOn(list, attr) => source(child, attr)
      case f @ Filter(_, child) =>
        if (filteredRelation(f, attr)) Some(Keys(f, attr, hopped = false))
        else source(child, attr)
      case j @ Join(l, r, _, _, _) =>
        val onLeft = l.outputSet.contains(attr)
        if (!onLeft && !r.outputSet.contains(attr)) None
        else {
          val (mine, other) = if (onLeft) (l, r) else (r, l)
          source(mine, attr).orElse(
            equal(j, attr, onLeft).flatMap(source(other, _)).map(_.copy(hopped = true))
          )
        }
      case _ => None
    }

  /**
   * The attribute of `j`'s other side that a conjunct of its condition equates with `attr`
   * (of the left side when `onLeft`), where `j` keeps only the rows of `attr`'s side that
   * match: its values of `attr` are then among the other attribute's (TPC-H q9: `l_partkey =
   * p_partkey`, `part` filtered by name).
   */
  private def equal(j: Join, attr: Attribute, onLeft: Boolean): Option[Attribute] = {
    val matchedOnly = j.joinType match {
      case _: InnerLike => true
      case LeftSemi | RightOuter => onLeft
      case LeftOuter => !onLeft
      case _ => false
    }
    val other = (if (onLeft) j.right else j.left).outputSet
    if (!matchedOnly) None
    else equalities(j.condition.toSeq).collectFirst {
      case (a, b) if a.semanticEquals(attr) && other.contains(b) => b
    }
  }

  /** Whether a projection of `list` passes `attr` on as it is. */
  private[spark] def passesOn(list: Seq[NamedExpression], attr: Attribute): Boolean =
    list.exists {
      case a: Attribute => a.exprId == attr.exprId
      case _ => false
    }

  /** The attribute pairs that conjuncts of `conditions` equate, each pair both ways round. */
  private[spark] def equalities(conditions: Seq[Expression]): Seq[(Attribute, Attribute)] =
    conditions.flatMap(splitConjunctivePredicates).flatMap {
      case EqualTo(a: Attribute, b: Attribute) => Seq((a, b), (b, a))
      case _ => Nil
    }

  /**
   * `f` is deterministic filters only, one likely selective, over a small Lance relation with
   * `attr`.
   */
  private[spark] def filteredRelation(f: Filter, attr: Attribute): Boolean = {
    def down(p: LogicalPlan, selective: Boolean): Boolean = p match {
      // Copied conditions must give the same rows again: deterministic, no subqueries.
      case Filter(c, child) if c.deterministic && !SubqueryExpression.hasSubquery(c) =>
        down(child, selective || isLikelySelective(c))
      case r: DataSourceV2Relation => selective && r.outputSet.contains(attr) && (r.table match {
          case t: LanceTable =>
            KeepFiltersForPruning.small(t, SQLConf.get.autoBroadcastJoinThreshold)
          case _ => false
        })
      case _ => false
    }
    down(f, selective = false)
  }

  /**
   * `side` (projections and filters over an aggregate grouped by `key` reading a Lance table,
   * or, when `relation`, over a Lance relation with `key`) with the aggregate's input, or the
   * relation, semi-joined with a fresh copy of `source`.
   */
  private def reduce(
      side: LogicalPlan,
      key: Attribute,
      source: Keys,
      relation: Boolean
  ): Option[LogicalPlan] = side match {
    case p @ Project(list, child) =>
      list.collectFirst {
        case a: Attribute if a.exprId == key.exprId => a
        case al @ Alias(a: Attribute, _) if al.exprId == key.exprId => a
      }.flatMap(k => reduce(child, k, source, relation)).map(c => p.copy(child = c))
    case f @ Filter(_, child) =>
      reduce(child, key, source, relation).map(c => f.copy(child = c))
    case r: DataSourceV2Relation
        if relation && r.table.isInstanceOf[LanceTable] &&
          r.outputSet.contains(key) =>
      Some(semiJoin(r, key, source))
    case a: Aggregate =>
      val (grouping, outputs, child) = (a.groupingExpressions, a.aggregateExpressions, a.child)
      val grouped = outputs.collectFirst {
        case x: Attribute if x.exprId == key.exprId => x
        case al @ Alias(x: Attribute, _) if al.exprId == key.exprId => x
      }.filter(g =>
        grouping.exists {
          case x: Attribute => x.exprId == g.exprId
          case _ => false
        }
      )
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
        .map(g => a.withNewChildren(Seq(semiJoin(child, g, source))))
    case _ => None
  }

  /** `plan LEFT SEMI JOIN <fresh copy of source> ON key = <its attribute>`, tagged `Made`. */
  private def semiJoin(plan: LogicalPlan, key: Attribute, source: Keys): LogicalPlan = {
    val (keys, keyAttr) = freshCopy(source)
    val semi = Join(plan, keys, LeftSemi, Some(EqualTo(key, keyAttr)), JoinHint.NONE)
    semi.setTagValue(Made, ())
    semi
  }

  /** `SELECT attr FROM <filters over relation>` with new attribute ids, and the new `attr`. */
  private[spark] def freshCopy(source: Keys): (LogicalPlan, Attribute) = {
    val Keys(chain, attr, _) = source
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

  /**
   * The values `attr` takes in `chain` (filters over a small Lance relation); `hopped` when
   * found through a join's equality (see `equal`).
   */
  private[spark] case class Keys(chain: LogicalPlan, attr: Attribute, hopped: Boolean)
}
