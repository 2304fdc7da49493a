package io.sparklance.spark

import java.util

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.{LocalScan, Scan, ScanBuilder}
import org.apache.spark.sql.types._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.types.UTF8String

import scala.jdk.CollectionConverters._

import io.sparklance.table.{FragmentRef, LanceDataset, ManifestFile, RowCounts}
import io.sparklance.table.txn.Rewrite

/**
 * A dataset's history and layout as a table (`option("metadata_table", "versions" | "tags" |
 * "fragments" | "indices")`, or in SQL ``lance.db.t.versions``, ``lance.`/path`.fragments``),
 * read on the driver from the manifests: small, and always the dataset's current state.
 */
class LanceMetadataTable(dataset: LanceDataset, kind: MetadataTable) extends Table
    with SupportsRead {
  override def name(): String = s"lance.`${dataset.root}`.${kind.name}"
  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_READ)

  override def schema(): StructType = kind match {
    case MetadataTable.Versions => StructType(Seq(
        StructField("version", LongType, nullable = false),
        StructField("timestamp", TimestampType, nullable = false),
        StructField("num_rows", LongType, nullable = false),
        StructField("num_fragments", LongType, nullable = false),
        StructField("num_deleted_rows", LongType, nullable = false),
        StructField("data_storage_version", StringType, nullable = false),
        StructField("tags", ArrayType(StringType, containsNull = false), nullable = false)
      ))
    case MetadataTable.Tags => StructType(Seq(
        StructField("tag", StringType, nullable = false),
        StructField("version", LongType, nullable = false)
      ))
    case MetadataTable.Fragments => StructType(Seq(
        StructField("fragment_id", LongType, nullable = false),
        StructField("num_rows", LongType, nullable = false),
        StructField("physical_rows", LongType, nullable = false),
        StructField("num_deleted_rows", LongType, nullable = false),
        StructField("data_files", ArrayType(StringType, containsNull = false), nullable = false),
        StructField("deletion_file", StringType, nullable = true)
      ))
    case MetadataTable.Indices => StructType(Seq(
        StructField("name", StringType, nullable = false),
        StructField("type", StringType, nullable = false),
        StructField("uuid", StringType, nullable = false),
        StructField("columns", ArrayType(StringType, containsNull = false), nullable = false),
        StructField("dataset_version", LongType, nullable = false),
        StructField("fragment_ids", ArrayType(LongType, containsNull = false), nullable = false)
      ))
  }

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder = new ScanBuilder {
    override def build(): Scan = new LocalScan {
      override def readSchema(): StructType = schema()
      override def rows(): Array[InternalRow] = kind match {
        case MetadataTable.Versions => versionRows()
        case MetadataTable.Tags =>
          dataset.tags().map(t => InternalRow(UTF8String.fromString(t.name), t.version)).toArray
        case MetadataTable.Fragments => fragmentRows()
        case MetadataTable.Indices => indexRows()
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
        vf.version,
        s.timestampMicros,
        physical - deleted,
        frags.size.toLong,
        deleted,
        UTF8String.fromString(s.dataStorageVersion),
        new GenericArrayData(tags.toArray[Any])
      )
    }.toArray
  }

  private def str(s: String): UTF8String = UTF8String.fromString(s)

  /** The latest version's fragments, in manifest order. */
  private def fragmentRows(): Array[InternalRow] = {
    val s = dataset.open(io.sparklance.table.VersionSpec.Latest)
    s.fragments.map { f =>
      val ref = FragmentRef(s.root, s, f)
      val deleted = RowCounts.deletedRows(dataset.io, ref)
      val physical = RowCounts.physicalRows(dataset.io, ref)
      val files = f.getFilesList.asScala.map(d => str(d.getPath)).toArray[Any]
      InternalRow(
        f.getId,
        physical - deleted,
        physical,
        deleted,
        new GenericArrayData(files),
        ref.deletionPath.map(p => str(p.stripPrefix(s.root).stripPrefix("/"))).orNull
      )
    }.toArray
  }

  /** The latest version's indices (its manifest's index section), as pylance lists them. */
  private def indexRows(): Array[InternalRow] = {
    val s = dataset.open(io.sparklance.table.VersionSpec.Latest)
    ManifestFile.indices(dataset.io, s).map { ix =>
      val uuid = ManifestFile.uuidText(ix.getUuid)
      // Nested fields by their dotted path, as pylance's list_indices names them.
      val columns = ix.getFieldsList.asScala.map(i =>
        str(s.schema.pathOf(i.intValue)
          .fold(s"#$i")(_.mkString(".")))
      ).toArray[Any]
      val frags = Rewrite.bitmap(ix).toArray.map(i => (i & 0xffffffffL): Any)
      InternalRow(
        str(ix.getName),
        str(LanceIndexes.typeName(ix.getIndexDetails.getTypeUrl)),
        str(uuid),
        new GenericArrayData(columns),
        ix.getDatasetVersion,
        new GenericArrayData(frags)
      )
    }.toArray
  }
}
