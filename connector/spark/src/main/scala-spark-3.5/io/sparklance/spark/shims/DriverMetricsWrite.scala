package io.sparklance.spark.shims

import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.Write

/** Spark 3.5 has no driver-side write metrics: they are computed and not shown. */
trait DriverMetricsWrite extends Write {
  protected def driverMetrics: Array[CustomTaskMetric]
}

object DriverMetricsWrite {
  /** Whether this line shows a Write's driver metrics. */
  val Supported: Boolean = false
}
