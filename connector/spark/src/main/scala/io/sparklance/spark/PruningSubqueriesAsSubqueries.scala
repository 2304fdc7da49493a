package io.sparklance.spark

import java.lang.reflect.Field
import java.util.{Collections, IdentityHashMap}

import org.apache.spark.sql.catalyst.expressions.DynamicPruningExpression
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.{InSubqueryExec, ReusedSubqueryExec, SparkPlan, SubqueryExec}
import org.apache.spark.sql.execution.adaptive.{AdaptiveSparkPlanExec, QueryStageExec}

/**
 * Marks the adaptive plans of dynamic pruning subqueries that are not bound to a broadcast as
 * subqueries, which removes a lock cycle that could hang a query.
 *
 * The connector's pruning rules ([[JoinedKeyPruning]], [[FilteredJoinPruning]], ...) add
 * dynamic pruning filters whose keys come from a subquery of their own. Spark's adaptive
 * planning (`PlanAdaptiveDynamicPruningFilters`) plans such a subquery with
 * `QueryExecution.prepareExecutedPlan`, whose `InsertAdaptiveSparkPlan` builds an
 * `AdaptiveSparkPlanExec` with `isSubquery = false` (Spark 3.5 to 4.3). Such a plan, running on
 * a subquery thread, posts UI updates of the whole query's plan (`SparkPlanInfo.fromSparkPlan`
 * reads every node's `metrics`, a lazy val, so under each node's monitor) while a
 * shuffle-exchange thread may hold an exchange's monitor initialising its
 * `mapOutputStatisticsFuture` (also a lazy val) and wait in `waitForSubqueries` for this very
 * subquery: each waits for the other, and the query hangs (seen once in three TPC-H runs, in
 * q7). Spark's own dynamic pruning never takes this path (it reuses broadcasts only).
 *
 * With `isSubquery = true` the subquery's plan posts only its own new metrics, as any other
 * subquery's does; nothing else reads the flag (Spark 3.5 to 4.3). The flag is set on the plan
 * itself, by reflection: a plan rule cannot replace the subquery, since `InSubqueryExec` equals
 * any other of the same result and Spark's transforms then keep the original; setting it in
 * place also reaches every reuse of the subquery. Runs among the query-stage optimizer rules,
 * after Spark plans the pruning filters; where the flag cannot be set, it changes nothing.
 */
object PruningSubqueriesAsSubqueries extends Rule[SparkPlan] {
  private lazy val isSubqueryField: Option[Field] =
    try {
      val f = classOf[AdaptiveSparkPlanExec].getDeclaredField("isSubquery")
      f.setAccessible(true)
      Some(f)
    } catch {
      case e: ReflectiveOperationException =>
        logWarning(s"Cannot mark pruning subqueries as subqueries on this Spark ($e)")
        None
      case e: RuntimeException => // InaccessibleObjectException, SecurityException
        logWarning(s"Cannot mark pruning subqueries as subqueries on this Spark ($e)")
        None
    }

  override def apply(plan: SparkPlan): SparkPlan = {
    isSubqueryField.foreach { field =>
      plan.foreach(_.expressions.foreach(_.foreach {
        case DynamicPruningExpression(in: InSubqueryExec) => adaptivePlan(in).foreach { a =>
            if (!a.isSubquery) field.setBoolean(a, true)
          }
        case _ =>
      }))
    }
    plan
  }

  /** The adaptive plan a pruning filter's keys come from, when it is a subquery of its own. */
  private def adaptivePlan(in: InSubqueryExec): Option[AdaptiveSparkPlanExec] =
    (in.plan match {
      case ReusedSubqueryExec(c) => c
      case other => other
    }) match {
      case SubqueryExec(_, a: AdaptiveSparkPlanExec, _) => Some(a)
      case _ => None
    }

  /**
   * The adaptive plans of the pruning subqueries in `plan` (adaptive plans, query stages and
   * subqueries searched too), as (marked as subqueries, not marked): what a test checks.
   */
  def count(plan: SparkPlan): (Int, Int) = {
    var marked = 0
    var unmarked = 0
    val seen = Collections.newSetFromMap(new IdentityHashMap[SparkPlan, java.lang.Boolean]())
    def visit(p: SparkPlan): Unit = if (seen.add(p)) {
      p.expressions.foreach(_.foreach {
        case DynamicPruningExpression(in: InSubqueryExec) =>
          adaptivePlan(in).foreach(a => if (a.isSubquery) marked += 1 else unmarked += 1)
          visit(in.plan)
        case _ =>
      })
      p match {
        case a: AdaptiveSparkPlanExec => visit(a.executedPlan)
        case q: QueryStageExec => visit(q.plan)
        case r: ReusedSubqueryExec => visit(r.child)
        case _ =>
      }
      p.children.foreach(visit)
    }
    visit(plan)
    (marked, unmarked)
  }
}
