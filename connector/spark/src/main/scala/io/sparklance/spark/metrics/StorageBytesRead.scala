package io.sparklance.spark.metrics

import org.apache.spark.sql.connector.metric.CustomSumMetric

/** Bytes a scan read from storage. */
class StorageBytesRead extends CustomSumMetric {
  override def name(): String = StorageBytesRead.Name
  override def description(): String = "bytes read from storage"
}

object StorageBytesRead {
  val Name = "storageBytesRead"
}
