package io.sparklance.spark.shims

/**
 * What differs on the Spark 4 line (4.0 to 4.3 share one build). Everything else in the Spark
 * layer is shared by every line.
 */
object SparkLineShims {
  /** The line this build serves (4.0 to 4.3). */
  val Line: String = "4.0"

  /** Spark 4 has every feature the connector uses. */
  def requireSpark4(feature: String): Unit = ()
}
