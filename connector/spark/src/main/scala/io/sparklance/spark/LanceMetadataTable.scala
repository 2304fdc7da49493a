package io.sparklance.spark

import java.util

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.{LocalScan, Scan, ScanBuilder}
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.types.UTF8String

import io.sparklance.table.{FragmentRef, LanceDataset, RowCounts}

/**
 * A dataset's history as a table (`option("metadata_table", "versions" | "tags")`), read on
 * the driver from the manifests: small, and always the dataset's current state.
 */
class LanceMetadataTable(dataset: LanceDataset, kind: MetadataTable) extends Table with SupportsRead {
  override def name(): String = s"lance.`${dataset.root}`.${kind.name}"
  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)

  override def schema(): StructType = kind match {
    case MetadataTable.Versions => StructType(Seq(
      StructField("version", LongType, nullable = false),
      StructField("timestamp", TimestampType, nullable = false),
      StructField("num_rows", LongType, nullable = false),
      StructField("num_fragments", LongType, nullable = false),
      StructField("num_deleted_rows", LongType, nullable = false),
      StructField("data_storage_version", StringType, nullable = false),
      StructField("tags", ArrayType(StringType, containsNull = false), nullable = false)))
    case MetadataTable.Tags => StructType(Seq(
      StructField("tag", StringType, nullable = false),
      StructField("version", LongType, nullable = false)))
  }

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = new ScanBuilder {
    override def build(): Scan = new LocalScan {
      override def readSchema(): StructType = schema()
      override def rows(): Array[InternalRow] = kind match {
        case MetadataTable.Versions => versionRows()
        case MetadataTable.Tags => dataset.tags().map(t => InternalRow(UTF8String.fromString(t.name), t.version)).toArray
      }
    }
  }

  private def versionRows(): Array[InternalRow] = {
    val tagsByVersion = dataset.tags().groupBy(_.version)
    dataset.versions().map { vf =>
      val s = dataset.open(io.sparklance.table.VersionSpec.Number(vf.version))
      val frags = s.fragments.map(f => FragmentRef(s.root, s, f))
      val deleted = frags.map(RowCounts.deletedRows(dataset.io, _)).sum
      val physical = frags.map(RowCounts.physicalRows(dataset.io, _)).sum
      val tags = tagsByVersion.getOrElse(vf.version, Nil).map(t => UTF8String.fromString(t.name))
      InternalRow(
        vf.version, s.timestampMicros, physical - deleted, frags.size.toLong, deleted,
        UTF8String.fromString(s.dataStorageVersion), new GenericArrayData(tags.toArray[Any]))
    }.toArray
  }
}
