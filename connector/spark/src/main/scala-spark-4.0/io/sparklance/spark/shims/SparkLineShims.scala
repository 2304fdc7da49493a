package io.sparklance.spark.shims

import org.apache.spark.sql.catalyst.expressions.{DynamicPruningSubquery, Expression}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * What differs on the Spark 4 line (4.0 to 4.3 share one build). Everything else in the Spark
 * layer is shared by every line.
 */
object SparkLineShims {

  /** The line this build serves (4.0 to 4.3). */
  val Line: String = "4.0"

  /** Spark 4 has every feature the connector uses. */
  def requireSpark4(feature: String): Unit = ()

  /**
   * Spark's dynamic pruning filter of `key` by the values of `buildKey` in `build`, evaluated
   * as a subquery when no broadcast of `build` can be reused. Built reflectively: later 4.x
   * releases add trailing parameters (4.3: a broadcast value projection), left at their
   * defaults here.
   */
  def pruningSubquery(key: Expression, build: LogicalPlan, buildKey: Expression): Expression = {
    val cls = classOf[DynamicPruningSubquery]
    val ctor = cls.getConstructors.maxBy(_.getParameterCount)
    val args = scala.collection.mutable.ArrayBuffer[AnyRef](
      key,
      build,
      Seq(buildKey),
      Seq(0),
      java.lang.Boolean.FALSE
    )
    // A default may depend on the parameters before it (4.3's takes all seven).
    while (args.size < ctor.getParameterCount) {
      val default = cls.getMethods.find(_.getName == "$lessinit$greater$default$" + (args.size + 1))
        .getOrElse(throw new IllegalStateException(
          s"Spark ${org.apache.spark.SPARK_VERSION}: no default for DynamicPruningSubquery's " +
            s"parameter ${args.size + 1}"
        ))
      args += default.invoke(null, args.take(default.getParameterCount).toSeq: _*)
    }
    ctor.newInstance(args.toSeq: _*).asInstanceOf[Expression]
  }
}
