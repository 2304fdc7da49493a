package io.sparklance.spark.metrics

import org.apache.spark.sql.connector.metric.CustomSumMetric

/**
 * Requests a scan sent to storage: HTTP requests to S3 (retries included), positioned reads and
 * status or listing calls through Hadoop.
 */
class StorageRequests extends CustomSumMetric {
  override def name(): String = StorageRequests.Name
  override def description(): String = "storage requests"
}

object StorageRequests {
  val Name = "storageRequests"
}
