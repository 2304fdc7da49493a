package io.sparklance.spark.shims

import org.apache.spark.sql.catalyst.expressions.{DynamicPruningSubquery, Expression}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

import io.sparklance.LanceErrors

/**
 * What differs on the Spark 3.5 line. Everything else in the Spark layer is shared by every
 * line; a feature the line cannot have is refused here, naming the running Spark, rather than
 * failing with a linkage error.
 */
object SparkLineShims {
  /** The line this build serves (the 4.0 build serves 4.0 to 4.3). */
  val Line: String = "3.5"

  /** Refuses `feature`, which needs Spark 4 (e.g. `CALL` procedures). */
  def requireSpark4(feature: String): Unit =
    throw LanceErrors.unsupported(
      s"$feature needs Spark 4.0 or later; this is Spark ${org.apache.spark.SPARK_VERSION} " +
        "(the spark-lance 3.5 line)")

  /**
   * Spark's dynamic pruning filter of `key` by the values of `buildKey` in `build`, evaluated
   * as a subquery when no broadcast of `build` can be reused.
   */
  def pruningSubquery(key: Expression, build: LogicalPlan, buildKey: Expression): Expression =
    DynamicPruningSubquery(key, build, Seq(buildKey), 0, onlyInBroadcast = false)
}
