package io.sparklance.spark.metrics

import org.apache.spark.sql.connector.metric.CustomSumMetric

/**
 * Requests a write's driver sent to storage to plan and commit it (listing the versions,
 * reading the manifest, the transaction and the manifest's conditional PUT, retries and
 * rebases included): what a commit costs on an object store.
 */
class DriverStorageRequests extends CustomSumMetric {
  override def name(): String = DriverStorageRequests.Name
  override def description(): String = "storage requests to plan and commit"
}

object DriverStorageRequests {
  val Name = "driverStorageRequests"
}
