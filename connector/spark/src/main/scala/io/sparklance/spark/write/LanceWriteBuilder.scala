package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.spark.errors.SparkErrors
import io.sparklance.format.writer._
import io.sparklance.spark.metrics.{DriverStorageRequests, StorageRequests, TaskMetricValue}
import io.sparklance.spark.shims.DriverMetricsWrite

/**
 * Appends, or replaces the dataset when Spark truncates first (overwrite, INSERT OVERWRITE)
 * or the table is staged to be replaced (`replace`: REPLACE TABLE ... AS SELECT), or replaces
 * the rows matching a condition (`writeTo(t).overwrite(condition)`, `INSERT INTO t REPLACE
 * WHERE`; see [[ReplaceWhere]]). `tableOptions` (the table's path and storage options) are the
 * defaults the write's own options override.
 */
class LanceWriteBuilder(
    info: LogicalWriteInfo,
    tableOptions: Map[String, String],
    replace: Boolean = false,
    intent: WriteIntent = WriteIntent.Plain
) extends WriteBuilder with SupportsOverwriteV2 {
  private var overwrite = replace
  private var replacing = Array.empty[Predicate]
  private lazy val options = new CaseInsensitiveStringMap(
    (tableOptions ++ info.options().asCaseSensitiveMap().asScala).asJava
  )

  override def truncate(): WriteBuilder = { overwrite = true; replacing = Array.empty; this }

  /** Any condition: one the reader cannot evaluate is refused by name when the write plans. */
  override def canOverwrite(predicates: Array[Predicate]): Boolean = true

  override def overwrite(predicates: Array[Predicate]): WriteBuilder = {
    replacing = predicates; this
  }

  override def build(): Write = new DriverMetricsWrite {
    @volatile private var batch: LanceBatchWrite = _
    override def toBatch: BatchWrite = {
      batch = SparkErrors.spark(LanceBatchWrite.plan(
        options,
        info.schema(),
        overwrite,
        replacing,
        intent
      ))
      batch
    }
    // Lines without driver write metrics (3.5) show none of them.
    override def supportedCustomMetrics(): Array[CustomMetric] =
      if (DriverMetricsWrite.Supported) Array(new StorageRequests, new DriverStorageRequests)
      else Array.empty
    override protected def driverMetrics: Array[CustomTaskMetric] = Option(batch).toArray
      .flatMap(b =>
        Array[CustomTaskMetric](
          TaskMetricValue(StorageRequests.Name, b.taskRequests),
          TaskMetricValue(DriverStorageRequests.Name, b.driverRequests)
        )
      )
    override def description(): String = s"LanceWrite(${options.get("path")}, " +
      s"${if (replacing.nonEmpty) "replace where" else if (overwrite) "overwrite" else "append"})"
  }
}
