package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{AttributeSet, Exists}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.catalyst.trees.TreePattern.EXISTS_SUBQUERY
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation
import org.apache.spark.sql.types.StructType

/**
 * Reads only the columns an EXISTS / NOT EXISTS subquery over a Lance table uses.
 *
 * Spark optimizes a subquery's plan, scan pushdown included, before it rewrites the subquery
 * into a semi or anti join; `EXISTS (SELECT * FROM t WHERE t.k = outer.k AND …)` then scans
 * every column of `t` although the join reads only `k` (SPARK-51831, mended in Spark 3.5.7
 * and 4.1 but not in 4.0.1). By the time this rule runs, the correlated predicates are the
 * subquery's join condition: the columns it names, and those the subquery's own filters and
 * projections read, are all the Lance scan keeps. A no-op where Spark prunes by itself.
 */
object PruneExistsColumns extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan =
    plan.transformAllExpressionsWithPruning(_.containsPattern(EXISTS_SUBQUERY)) {
      case e: Exists =>
        val inner = apply(e.plan)
        val needed = AttributeSet(e.joinCond.flatMap(_.references)) intersect inner.outputSet
        val pruned = if (needed.isEmpty) inner else prune(inner, needed)
        if (pruned eq inner) { if (inner eq e.plan) e else e.withNewPlan(inner) }
        else e.withNewPlan(Project(inner.output.filter(needed.contains), pruned))
    }

  /** `plan` with its Lance scan narrowed to `needed` and what filters and projections read. */
  private def prune(plan: LogicalPlan, needed: AttributeSet): LogicalPlan = plan match {
    case f @ Filter(condition, child) =>
      val c = prune(child, needed ++ condition.references)
      if (c eq child) f else f.copy(child = c)
    case p @ Project(list, child) =>
      val kept = list.filter(x => needed.contains(x.toAttribute))
      val c = prune(child, AttributeSet(kept.flatMap(_.references)))
      if (c eq child) p else Project(kept, c)
    case s: DataSourceV2ScanRelation => s.scan match {
        case scan: LanceScan if scan.prunable =>
          val keep = s.output.zip(scan.readSchema().fields).filter(c => needed.contains(c._1))
          if (keep.isEmpty || keep.size == s.output.size) s
          else s.copy(scan = scan.withColumns(StructType(keep.map(_._2))), output = keep.map(_._1))
        case _ => s
      }
    case other => other
  }
}
