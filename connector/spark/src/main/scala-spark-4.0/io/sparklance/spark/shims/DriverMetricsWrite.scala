package io.sparklance.spark.shims

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.write.Write

/** A Write reporting driver-side metrics: Spark 4 shows them beside the tasks' ones. */
trait DriverMetricsWrite extends Write {
  /** The driver's metric values once the write committed. */
  protected def driverMetrics: Array[CustomTaskMetric]

  /** The metrics the driver reports (none on lines without driver write metrics). */
  protected def driverMetricKinds: Array[CustomMetric]

  override def reportDriverMetrics(): Array[CustomTaskMetric] = driverMetrics
}

object DriverMetricsWrite {
  /** Whether this line shows a Write's driver metrics. */
  val Supported: Boolean = true
}
