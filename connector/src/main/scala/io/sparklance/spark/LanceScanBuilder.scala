package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar}
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownAggregates, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.types.StructType

/**
 * Builds the scan of one table version: column pruning (nested too), and COUNT(*) answered
 * from metadata. Filters are not pushed yet, so every filter stays in Spark and a pushed
 * count always means "all live rows of this version".
 */
class LanceScanBuilder(table: LanceTable) extends ScanBuilder
  with SupportsPushDownRequiredColumns with SupportsPushDownAggregates {

  private var required: StructType = table.schema()
  private var countOnly = false

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  /** Only a bare COUNT(*) (Spark turns count() and count(1) into it), with no grouping. */
  override def pushAggregation(aggregation: Aggregation): Boolean = {
    countOnly = aggregation.groupByExpressions().isEmpty &&
      aggregation.aggregateExpressions().nonEmpty &&
      aggregation.aggregateExpressions().forall(_.isInstanceOf[CountStar])
    countOnly
  }

  override def supportCompletePushDown(aggregation: Aggregation): Boolean =
    aggregation.groupByExpressions().isEmpty && aggregation.aggregateExpressions().forall(_.isInstanceOf[CountStar])

  override def build(): Scan =
    if (countOnly) new LanceCountScan(table)
    else new LanceScan(table, required)
}
