package io.sparklance.spark

import org.apache.spark.sql.connector.catalog.MetadataColumn
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StructField, StructType}

import io.sparklance.table.FragmentRef

/**
 * The per-row metadata a Lance scan can return besides the data, as pylance's
 * `to_table(with_row_id=True, with_row_address=True)` and its version columns give them:
 *  - `_rowaddr`: `(fragment id << 32) | row offset within the fragment`;
 *  - `_rowid`: the stable row id on datasets with stable row ids, else the row address;
 *  - `_fragid`: the fragment id;
 *  - `_row_created_at_version`, `_row_last_updated_at_version`: the dataset version that
 *    created / last updated the row (1 where the fragment records none, as pylance reports).
 * Lance's unsigned 64-bit values are Spark longs (fragment ids and offsets fit in 32 bits).
 */
object LanceMetadataColumns {
  final case class Column(name: String, dataType: DataType) extends MetadataColumn {
    override def isNullable: Boolean = false
    override def comment(): String = s"Lance per-row metadata: $name"
  }

  val RowAddr = Column("_rowaddr", LongType)
  val RowId = Column("_rowid", LongType)
  val FragId = Column("_fragid", IntegerType)
  val CreatedAt = Column("_row_created_at_version", LongType)
  val UpdatedAt = Column("_row_last_updated_at_version", LongType)

  val All: Seq[Column] = Seq(RowId, RowAddr, FragId, CreatedAt, UpdatedAt)

  /** The metadata columns of a table with `schema` (a data column of the same name wins). */
  def of(schema: StructType): Array[MetadataColumn] =
    All.filterNot(c => schema.fieldNames.contains(c.name)).toArray

  def byName(name: String): Option[Column] = All.find(_.name == name)

  def field(c: Column): StructField = StructField(c.name, c.dataType, nullable = false)

  /**
   * Per-fragment values the metadata columns are made of, decoded once per fragment a task
   * reads and only for the columns asked for: row ids (stable row ids) and row versions.
   */
  final class FragmentValues(f: FragmentRef, wanted: Set[Column]) {
    val id: Long = f.id
    // Only row ids and versions need it: `_rowaddr` and `_fragid` are made of the offsets.
    private lazy val lineage = f.lineage.getOrElse(
      throw new IllegalStateException(s"fragment ${f.id}: no lineage attached for metadata")
    )
    private val rows = f.physicalRows.toInt
    val rowIds: Array[Long] = if (wanted(RowId)) lineage.decodeRowIds().orNull else null
    val created: Array[Long] = if (wanted(CreatedAt)) lineage.decodeCreatedAt(rows) else null
    val updated: Array[Long] = if (wanted(UpdatedAt)) lineage.decodeUpdatedAt(rows) else null
  }
}
