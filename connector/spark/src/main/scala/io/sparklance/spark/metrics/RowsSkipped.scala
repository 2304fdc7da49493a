package io.sparklance.spark.metrics

import org.apache.spark.sql.connector.metric.CustomSumMetric

/**
 * Rows a scan passed over without returning them: deleted rows and rows a pushed filter removed.
 */
class RowsSkipped extends CustomSumMetric {
  override def name(): String = RowsSkipped.Name
  override def description(): String = "rows skipped (deleted or filtered)"
}

object RowsSkipped {
  val Name = "rowsSkipped"
}
