package io.sparklance.spark

import java.util

import org.apache.spark.sql.connector.catalog.{MetadataColumn, SupportsMetadataColumns, SupportsRead,
  Table, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.storage.FileIO
import io.sparklance.table.Snapshot

/** One version of a Lance dataset, fixed when the table is loaded. */
class LanceTable(val snapshot: Snapshot, val io: FileIO, val options: LanceReadOptions)
  extends Table with SupportsRead with SupportsMetadataColumns {

  private lazy val sparkSchema = SchemaConverter.toSpark(snapshot.schema)

  override def name(): String = s"lance.`${snapshot.root}`@v${snapshot.version}"
  override def schema(): StructType = sparkSchema
  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)

  /** `_rowid`, `_rowaddr`, `_fragid` and the row version columns (see LanceMetadataColumns). */
  override def metadataColumns(): Array[MetadataColumn] = LanceMetadataColumns.of(schema())

  override def newScanBuilder(ignored: CaseInsensitiveStringMap): ScanBuilder = new LanceScanBuilder(this)
}
