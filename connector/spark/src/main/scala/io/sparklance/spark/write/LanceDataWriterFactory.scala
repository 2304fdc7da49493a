package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.{LanceErrors, LanceSchemaMismatchException}
import io.sparklance.spark.errors.SparkErrors
import io.sparklance.format.LanceField
import io.sparklance.format.blob.{BlobColumn, BlobPaths, BlobSidecars, ExternalBlobs}
import io.sparklance.format.writer._
import io.sparklance.storage.{
  BestEffort,
  FileIO,
  IoStats,
  OutputSink,
  Paths,
  RoutingFileIO,
  SerializableConf,
  StreamSink
}
import io.sparklance.spark.metrics.{DriverStorageRequests, StorageRequests, TaskMetricValue}
import io.sparklance.spark.shims.DriverMetricsWrite
import io.sparklance.spark.{ColumnEncodingProperties, LanceTable, LanceTableChanges, LanceTables}
import io.sparklance.table.{DatasetLayout, PrimaryKey, RowFilter, RowFilterEvaluator}
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}
import io.sparklance.table.txn

class LanceDataWriterFactory(plan: TaskPlan) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new LanceDataWriter(plan)
}
