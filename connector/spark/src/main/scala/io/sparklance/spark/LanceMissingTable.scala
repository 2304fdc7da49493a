package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SQLContext, SaveMode, SparkSession}
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.spark.errors.SparkErrors
import io.sparklance.spark.write.LanceSave
import io.sparklance.table.DatasetLayout

/** A path with no dataset yet, as seen by a save or a read with a user-given schema: reading it fails. */
class LanceMissingTable(path: String, schema0: StructType) extends Table with SupportsRead {
  override def name(): String = LanceTable.nameOf(path)
  override def schema(): StructType = schema0
  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_READ)
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    throw LanceErrors.pathNotFound(path)
}
