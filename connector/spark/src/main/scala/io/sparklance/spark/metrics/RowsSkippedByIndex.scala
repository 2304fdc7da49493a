package io.sparklance.spark.metrics

import org.apache.spark.sql.connector.metric.CustomSumMetric

/**
 * Rows a scan passed over without decoding any of their columns, because a scalar index showed
 * none of them could pass the pushed filter (they are part of [[RowsSkipped]] too). Splits
 * and fragments left out at planning are not counted: see `fragmentsRead`. Nor are the rows
 * a pushed TopN's second pass passes over: they are not among a task's best rows, which no
 * index decided ([[io.sparklance.spark.LanceTopNReader]]).
 */
class RowsSkippedByIndex extends CustomSumMetric {
  override def name(): String = RowsSkippedByIndex.Name
  override def description(): String = "rows skipped undecoded (scalar index)"
}

object RowsSkippedByIndex {
  val Name = "rowsSkippedByIndex"
}
