package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  DynamicPruningSubquery,
  EqualTo,
  Expression,
  NamedExpression,
  PredicateHelper,
  ScalarSubquery,
  SubqueryExpression
}
import org.apache.spark.sql.catalyst.plans.{
  InnerLike,
  JoinType,
  LeftAnti,
  LeftOuter,
  LeftSemi,
  RightOuter
}
import org.apache.spark.sql.catalyst.plans.logical.{
  Filter,
  Join,
  JoinHint,
  LogicalPlan,
  Project,
  Subquery
}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.internal.SQLConf

import io.sparklance.spark.shims.SparkLineShims

/**
 * Dynamic pruning of a large Lance table by the keys of a small table it is joined with, where
 * the small table is itself reduced by a join further up (TPC-H q7: `lineitem` joined on
 * `l_suppkey = s_suppkey` with `supplier`, and three joins later `supplier` with `nation`,
 * filtered to two nations, on `s_nationkey = n_nationkey`; q21: one nation).
 *
 * An inner join `U` on `a = b`, where `b`'s values come from a selective small Lance table
 * (filters over it, see [[SemiJoinReduction]]), keeps only rows whose `a` is among that
 * table's keys. When `a` comes from a small Lance table `S` read on one side of a join `J`
 * below `U`, and `J` is inner on `y = x` with `y` of `S`, a row of the large table with `x`
 * outside `SELECT y FROM S WHERE a IN (b's keys)` can reach no output row of `U`. Spark prunes
 * the large table by `S` only where `S` itself is filtered, and then by all of `S`; this rule
 * adds to the large table's read Spark's dynamic pruning filter by that reduced key set, as
 * a subquery of its own (not bound to a broadcast): at run time Spark evaluates it once and
 * hands the keys to [[LanceScan]] as a runtime `IN` filter. In q7, 146 thousand `lineitem`
 * rows reach the joins instead of 1.8 million.
 *
 * The rows of `S` must reach `U`, and those of the large table `J`, through deterministic
 * projections that pass the key on, deterministic filters, and joins whose output rows each
 * come from one row of that side, which no other row of it changes (inner joins; the preserved
 * side of outer joins; the left side of semi and anti joins); `S` is deterministic filters and
 * projections over a Lance table small as [[KeepFiltersForPruning]] judges it, the pruned
 * table a Lance table larger than the broadcast threshold. One level only: the keys of `U` are
 * not followed further down. EXISTS / NOT EXISTS subqueries evaluated on the pruned table's
 * rows (q21's `l2`, `l3`) are pruned in turn by those rows' keys, as [[ExistsPruning]] does.
 * Runs before scan push-down, once (Spark derives the filters of joins' OR conditions, as
 * q7's, only then); a no-op when dynamic pruning or broadcasts are off, in subqueries' plans
 * and in plans with scalar subqueries (see `hasScalarSubquery`).
 */
object JoinedKeyPruning extends Rule[LogicalPlan] with PredicateHelper {
  override def apply(plan: LogicalPlan): LogicalPlan =
    rewriteInnerJoins(plan) { (side, a, other, b) =>
      SemiJoinReduction.source(other, b).fold(side)(k => reduced(side, a, k))
    }

  /**
   * `plan` with `rewrite(side, a, other, b)` applied at each inner join, bottom up, for each key
   * equality `a = b` of its condition taken both ways round (`b` on one side may reduce `a` on
   * the other): `side` is the join's side holding `a` as rewritten so far, `other` the other
   * side. Shared with [[FilteredJoinPruning]]; a no-op when dynamic pruning or broadcasts are
   * off, in subqueries' plans and in plans with scalar subqueries (see `hasScalarSubquery`).
   */
  private[spark] def rewriteInnerJoins(plan: LogicalPlan)(
      rewrite: (LogicalPlan, Attribute, LogicalPlan, Attribute) => LogicalPlan
  ): LogicalPlan = {
    val conf = SQLConf.get
    if (
      !conf.dynamicPartitionPruningEnabled || conf.autoBroadcastJoinThreshold <= 0 ||
      plan.isInstanceOf[Subquery] || hasScalarSubquery(plan)
    ) plan
    else plan.transformUp {
      case j @ Join(left, right, _: InnerLike, Some(cond), _) =>
        var newLeft = left
        var newRight = right
        SemiJoinReduction.equalities(Seq(cond)).foreach { case (a, b) =>
          if (left.outputSet.contains(a) && right.outputSet.contains(b)) {
            newLeft = rewrite(newLeft, a, right, b)
          } else if (right.outputSet.contains(a) && left.outputSet.contains(b)) {
            newRight = rewrite(newRight, a, left, b)
          }
        }
        if ((newLeft eq left) && (newRight eq right)) j
        else j.copy(left = newLeft, right = newRight)
    }
  }

  /**
   * Whether `plan` has a scalar subquery. Spark 4.0 can deadlock running a pruning subquery in
   * a plan whose exchanges a scalar subquery reuses (TPC-H q11: a lock of a shared exchange,
   * taken while its stage waits for the pruning, is wanted to describe the scalar subquery's
   * plan), so such plans, and subqueries' own plans, are left as they are.
   */
  private def hasScalarSubquery(plan: LogicalPlan): Boolean =
    plan.exists(_.expressions.exists(_.exists(_.isInstanceOf[ScalarSubquery])))

  /**
   * `side` with the large tables pruned that a join below joins with the small table that
   * `a` comes from, where only rows whose `a` is among `keys` reach the output.
   */
  private def reduced(side: LogicalPlan, a: Attribute, keys: SemiJoinReduction.Keys): LogicalPlan =
    side match {
      case p @ Project(list, child) if passesOn(list, a) =>
        val c = reduced(child, a, keys)
        if (c eq child) p else p.copy(child = c)
      case f @ Filter(cond, child) if cond.deterministic =>
        val c = reduced(child, a, keys)
        if (c eq child) f else f.copy(child = c)
      case j @ Join(l, r, joinType, cond, _) if keeps(joinType, l.outputSet.contains(a)) =>
        val onLeft = l.outputSet.contains(a)
        val (mine, other) = if (onLeft) (l, r) else (r, l)
        val (newMine, newOther) =
          if (joinType.isInstanceOf[InnerLike] && smallRead(mine, a)) {
            (mine, pruned(other, mine, a, keys, cond.toSeq))
          } else {
            val m = reduced(mine, a, keys)
            // A large table joined here with the rows of one pruned below: pruned by their keys.
            if ((m eq mine) || !joinType.isInstanceOf[InnerLike]) (m, other)
            else (m, joinedWithPruned(other, m, cond.toSeq))
          }
        if ((newMine eq mine) && (newOther eq other)) j
        else if (onLeft) j.copy(left = newMine, right = newOther)
        else j.copy(left = newOther, right = newMine)
      case other => other
    }

  /**
   * `other` with each large Lance table pruned whose column `x` the join condition `cond`
   * equates with a column `y` of `small` (the read of the small table that `a` comes from).
   */
  private def pruned(
      other: LogicalPlan,
      small: LogicalPlan,
      a: Attribute,
      keys: SemiJoinReduction.Keys,
      cond: Seq[Expression]
  ): LogicalPlan =
    SemiJoinReduction.equalities(cond).foldLeft(other) { case (plan, (y, x)) =>
      if (!small.outputSet.contains(y) || !plan.outputSet.contains(x)) plan
      else withPruning(plan, x, SparkLineShims.pruningSubquery(x, build(small, y, a, keys), y))
        .getOrElse(plan)
    }

  /**
   * `other` with each large Lance table pruned whose column `x` the join condition `cond`
   * equates with a column `z` of a pruned read in `side` (TPC-H q21: `orders` by the order
   * keys of the `lineitem` rows of one nation's suppliers): by `z`'s values in that read,
   * without its conditions that hold other subqueries (more rows, the same keys at most).
   */
  private def joinedWithPruned(
      other: LogicalPlan,
      side: LogicalPlan,
      cond: Seq[Expression]
  ): LogicalPlan =
    SemiJoinReduction.equalities(cond).foldLeft(other) { case (plan, (z, x)) =>
      if (!side.outputSet.contains(z) || !plan.outputSet.contains(x)) plan
      else prunedReadOf(side, z).flatMap { read =>
        val rows = read.transform { case Filter(c, child) =>
          splitConjunctivePredicates(c).filter(e =>
            e.isInstanceOf[DynamicPruningSubquery] || !SubqueryExpression.hasSubquery(e)
          ) match {
            case Seq() => child
            case kept => Filter(kept.reduce(And), child)
          }
        }
        val build = ExistsPruning.optimized(Project(Seq(z), rows))
        withPruning(plan, x, SparkLineShims.pruningSubquery(x, build, z))
      }.getOrElse(plan)
    }

  /**
   * The read in `plan` that `z` comes from, when it is pruned by this rule (deterministic
   * projections and filters, one with a dynamic pruning filter, over a Lance relation), reached
   * through operators each of whose output rows comes from one of its rows (see `keeps`).
   */
  private def prunedReadOf(plan: LogicalPlan, z: Attribute): Option[LogicalPlan] = plan match {
    case read if read.outputSet.contains(z) && prunedRead(read, None).isDefined => Some(read)
    case Project(list, child) if passesOn(list, z) => prunedReadOf(child, z)
    case Filter(c, child) if c.deterministic => prunedReadOf(child, z)
    case Join(l, r, joinType, _, _) if keeps(joinType, l.outputSet.contains(z)) =>
      prunedReadOf(if (l.outputSet.contains(z)) l else r, z)
    case _ => None
  }

  /** `SELECT y FROM small LEFT SEMI JOIN <copy of keys> ON a = <its key>`, optimized. */
  private def build(
      small: LogicalPlan,
      y: Attribute,
      a: Attribute,
      keys: SemiJoinReduction.Keys
  ): LogicalPlan = {
    val (copy, key) = SemiJoinReduction.freshCopy(keys)
    val semi = Join(small, copy, LeftSemi, Some(EqualTo(a, key)), JoinHint.NONE)
    ExistsPruning.optimized(Project(Seq(y), semi))
  }

  /**
   * `plan` with `pruning` over the large Lance relation that `x` comes from (one `accept`s;
   * by default, larger than the broadcast threshold), reached through operators each of whose
   * output rows comes from one of its rows (see `keeps`); None where there is none, or where
   * its read is pruned by `x` already.
   */
  private[spark] def withPruning(
      plan: LogicalPlan,
      x: Attribute,
      pruning: => Expression,
      accept: LanceTable => Boolean = _.estimatedBytes > limit
  ): Option[LogicalPlan] = plan match {
    case p @ Project(list, child) if passesOn(list, x) =>
      withPruning(child, x, pruning, accept).map(c => p.copy(child = c))
    case Filter(c, _) if prunes(c, Some(x)) || !c.deterministic => None
    case f @ Filter(_, child) => withPruning(child, x, pruning, accept).map { c =>
        // Its EXISTS subqueries, now evaluated on fewer rows, read only those rows' keys.
        val g = ExistsPruning.withExistsPruned(
          f.copy(child = c),
          (rows, o) => prunedRead(rows, Some(x)).exists(_.outputSet.contains(o))
        )
        (g.child, child) match {
          // One filter over the relation: scan push-down takes only the one right over it.
          case (Filter(p, r), _: DataSourceV2Relation) => Filter(And(g.condition, p), r)
          case _ => g
        }
      }
    case j @ Join(l, r, joinType, _, _) if keeps(joinType, l.outputSet.contains(x)) =>
      if (l.outputSet.contains(x)) withPruning(l, x, pruning, accept).map(c => j.copy(left = c))
      else withPruning(r, x, pruning, accept).map(c => j.copy(right = c))
    case rel: DataSourceV2Relation if rel.outputSet.contains(x) =>
      rel.table match {
        case t: LanceTable if accept(t) => Some(Filter(pruning, rel))
        case _ => None
      }
    case _ => None
  }

  /**
   * The relation `plan` reads, where `plan` is deterministic projections and filters over it,
   * one of them pruning by `x` (by any column when None): rows a subquery can compute again.
   */
  private def prunedRead(plan: LogicalPlan, x: Option[Attribute]): Option[DataSourceV2Relation] = {
    def down(p: LogicalPlan, pruned: Boolean): Option[DataSourceV2Relation] = p match {
      case Project(list, child) if list.forall(_.deterministic) => down(child, pruned)
      case Filter(c, child) if c.deterministic => down(child, pruned || prunes(c, x))
      case r: DataSourceV2Relation if pruned => Some(r)
      case _ => None
    }
    down(plan, pruned = false)
  }

  /** A projection of `list` passes `attr` on, and computes nothing that may differ per run. */
  private[spark] def passesOn(list: Seq[NamedExpression], attr: Attribute): Boolean =
    SemiJoinReduction.passesOn(list, attr) && list.forall(_.deterministic)

  /** Whether `condition` holds a dynamic pruning filter of `x` (of any column when None). */
  private def prunes(condition: Expression, x: Option[Attribute]): Boolean = condition.exists {
    case d: DynamicPruningSubquery => x.forall(d.pruningKey.semanticEquals)
    case _ => false
  }

  /**
   * Whether each output row of a join of `joinType` comes from one row of its left (`onLeft`)
   * or right side, and no other row of that side changes it.
   */
  private[spark] def keeps(joinType: JoinType, onLeft: Boolean): Boolean = joinType match {
    case _: InnerLike => true
    case LeftOuter | LeftSemi | LeftAnti => onLeft
    case RightOuter => !onLeft
    case _ => false
  }

  /**
   * `p` is deterministic projections and filters, without subqueries, over a small Lance
   * relation, and outputs `a`.
   */
  private def smallRead(p: LogicalPlan, a: Attribute): Boolean = p.outputSet.contains(a) && {
    def down(q: LogicalPlan): Boolean = q match {
      case Project(list, child) => list.forall(_.deterministic) && down(child)
      case Filter(c, child) =>
        c.deterministic && !SubqueryExpression.hasSubquery(c) && down(child)
      case r: DataSourceV2Relation => r.table match {
          case t: LanceTable => KeepFiltersForPruning.small(t, limit)
          case _ => false
        }
      case _ => false
    }
    down(p)
  }

  private def limit: Long = SQLConf.get.autoBroadcastJoinThreshold
}
