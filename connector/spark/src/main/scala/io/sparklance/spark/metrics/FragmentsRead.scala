package io.sparklance.spark.metrics

import org.apache.spark.sql.connector.metric.CustomSumMetric

/** Fragment slices a scan opened (a fragment split over tasks counts once per task). */
class FragmentsRead extends CustomSumMetric {
  override def name(): String = FragmentsRead.Name
  override def description(): String = "fragments read"
}

object FragmentsRead {
  val Name = "fragmentsRead"
}
