package io.sparklance.spark

import java.util

import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors

/** A path with no dataset yet, as seen by a save or a read with a user-given schema: reading it fails. */
class LanceMissingTable(path: String, schema0: StructType) extends Table with SupportsRead {
  override def name(): String = LanceTable.nameOf(path)
  override def schema(): StructType = schema0
  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_READ)
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    throw LanceErrors.pathNotFound(path)
}
