package io.sparklance.spark.shims

import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.write.Write

/** A Write reporting driver-side metrics: Spark 4 shows them beside the tasks' ones. */
trait DriverMetricsWrite extends Write {

  /** The driver's metric values once the write committed. */
  protected def driverMetrics: Array[CustomTaskMetric]

  override def reportDriverMetrics(): Array[CustomTaskMetric] = driverMetrics
}

object DriverMetricsWrite {

  /** Whether this line shows a Write's driver metrics. */
  val Supported: Boolean = true
}
