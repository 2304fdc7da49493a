package io.sparklance.spark.metrics

import org.apache.spark.sql.connector.metric.CustomTaskMetric

/** One task's value of the metric named `name`. */
final case class TaskMetricValue(name: String, value: Long) extends CustomTaskMetric
