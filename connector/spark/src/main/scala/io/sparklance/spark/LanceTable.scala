package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.SparkContext
import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{
  MetadataColumn,
  SupportsDeleteV2,
  SupportsMetadataColumns,
  SupportsRead,
  SupportsRowLevelOperations,
  SupportsWrite,
  Table,
  TableCapability
}
import org.apache.spark.sql.connector.catalog.index.{SupportsIndex, TableIndex}
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{
  LogicalWriteInfo,
  RowLevelOperationBuilder,
  RowLevelOperationInfo,
  WriteBuilder
}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.storage.FileIO
import io.sparklance.spark.write.{LanceDeltaOperation, LanceWriteBuilder}
import io.sparklance.table.{FragmentRef, RowFilter, Snapshot}
import io.sparklance.table.txn.TableDelete

/**
 * A Lance dataset as a Spark table: reads one version, fixed when the table is loaded;
 * writes (append, overwrite) and deletes commit new versions on top of the latest one.
 *
 * A table for `spark.read.format("lance")` is not `writable`: Spark then hands
 * `df.write.format("lance")` saves to LanceProvider's `createRelation`, which honours every
 * save mode ([[io.sparklance.spark.write.LanceSave]]); catalog tables are writable (INSERT,
 * DELETE).
 *
 * @param tableOptions the options the table was loaded with (path, storage settings): the
 *                     defaults of its writes.
 * @param tableProperties what a catalog records of the table (location, provider, external),
 *                        shown by DESCRIBE.
 */
class LanceTable(
    val snapshot: Snapshot,
    val io: FileIO,
    val options: LanceReadOptions,
    val tableOptions: Map[String, String] = Map.empty,
    writable: Boolean = false,
    tableProperties: Map[String, String] = Map.empty
) extends Table with SupportsRead with SupportsWrite with SupportsMetadataColumns
    with SupportsDeleteV2 with SupportsRowLevelOperations with SupportsIndex {

  private lazy val sparkSchema = SchemaConverter.toSpark(snapshot.schema)

  override def name(): String = LanceTable.nameOf(snapshot.root)
  override def schema(): StructType = sparkSchema

  /**
   * The table config (`ds.config()`, what SET TBLPROPERTIES changes), plus what the catalog
   * owns: provider, location, and for session-catalog tables whether they are external and
   * their owner; and what Lance derives: the version read (`lance.version`) and the file
   * format version (`lance.data_storage_version`), which DESCRIBE EXTENDED shows.
   */
  override def properties(): java.util.Map[String, String] = {
    import org.apache.spark.sql.connector.catalog.TableCatalog
    val owned = tableProperties.filter { case (k, _) =>
      LanceTableChanges.Reserved(k.toLowerCase) || k == TableCatalog.PROP_OWNER
    }
    (snapshot.manifest.getConfigMap.asScala.toMap ++ owned ++ Map(
      TableCatalog.PROP_PROVIDER -> "lance",
      TableCatalog.PROP_LOCATION -> snapshot.root,
      LanceTableChanges.VersionKey -> snapshot.version.toString,
      LanceTableChanges.FormatKey -> snapshot.dataStorageVersion
    ) ++
      Some(_root_.io.sparklance.table.PrimaryKey.paths(snapshot.schema)).filter(_.nonEmpty)
        .map(k => LanceTableChanges.PrimaryKeyKey -> k.mkString(",")) ++
      ColumnEncodingProperties.of(snapshot.schema)).asJava
  }
  override def capabilities(): util.Set[TableCapability] =
    if (!writable) util.EnumSet.of(TableCapability.BATCH_READ)
    else util.EnumSet.of(
      TableCapability.BATCH_READ,
      TableCapability.BATCH_WRITE,
      TableCapability.TRUNCATE,
      TableCapability.OVERWRITE_BY_FILTER
    )

  /** `_rowid`, `_rowaddr`, `_fragid` and the row version columns (see LanceMetadataColumns). */
  override def metadataColumns(): Array[MetadataColumn] = LanceMetadataColumns.of(schema())

  /**
   * Scan options are the table's; only the optimizer rules' marks are read here
   * ([[KeepFiltersForPruning]], [[LikePushDown]]).
   */
  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    new LanceScanBuilder(
      this,
      keepFilters = KeepFiltersForPruning.marked(options),
      likes = LikePushDown.of(options)
    )

  /** The top-level columns provably without nulls in this version, found on first use. */
  private lazy val nullFree: Set[String] =
    _root_.io.sparklance.table.NullFreeColumns.proven(io, snapshot)

  /** Whether top-level `column` provably holds no null in this version. */
  def provesNoNulls(column: String): Boolean = nullFree.contains(column)

  /** The bytes of every data file (estimated where the manifest has no sizes); asked by the
   *  optimizer rules on every iteration, so computed once. */
  lazy val estimatedBytes: Long = snapshot.fragments.iterator
    .map(f => SplitPlanner.estimatedBytes(FragmentRef(snapshot.root, snapshot, f))).sum

  @transient private var tasksIoShared: Broadcast[FileIO] = _
  @transient private var tasksIoContext: SparkContext = _

  /**
   * [[io]] for the tasks, broadcast once for every scan of this table instead of once per
   * scan: self-joins, subqueries and the queries of one DataFrame read the same table object.
   * Made again when the SparkContext it was made in has stopped.
   */
  private[spark] def tasksIo(): Broadcast[FileIO] = synchronized {
    val sc = SparkSession.active.sparkContext
    if (tasksIoShared == null || (tasksIoContext ne sc) || sc.isStopped) {
      tasksIoShared = sc.broadcast(io)
      tasksIoContext = sc
    }
    tasksIoShared
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new LanceWriteBuilder(info, tableOptions + ("path" -> snapshot.root))

  /** UPDATE, MERGE INTO and DELETEs with conditions the reader cannot evaluate. */
  override def newRowLevelOperationBuilder(info: RowLevelOperationInfo): RowLevelOperationBuilder =
    new RowLevelOperationBuilder {
      override def build() = new LanceDeltaOperation(LanceTable.this, info.command(), tableOptions)
    }

  /** CREATE INDEX ... USING btree (column): a BTREE scalar index (see LanceIndexes). */
  override def createIndex(
      indexName: String,
      columns: Array[NamedReference],
      columnsProperties: util.Map[NamedReference, util.Map[String, String]],
      properties: util.Map[String, String]
  ): Unit =
    LanceIndexes.create(this, indexName, columns, properties, tableOptions - "path")

  override def dropIndex(indexName: String): Unit = LanceIndexes.drop(this, indexName)

  override def indexExists(indexName: String): Boolean =
    listIndexes().exists(_.indexName() == indexName)

  override def listIndexes(): Array[TableIndex] = LanceIndexes.list(this)

  private def translate(predicates: Array[Predicate]): Option[RowFilter] = {
    val t = new FilterTranslator(snapshot.schema, schema())
    val all = predicates.toSeq.map(t.translate)
    if (all.forall(_.isDefined)) Some(RowFilter.all(all.map(_.get))) else None
  }

  /** Deletes whose condition the reader can evaluate exactly (see FilterTranslator). */
  override def canDeleteWhere(predicates: Array[Predicate]): Boolean =
    translate(predicates).isDefined

  /**
   * Marks the matching rows of the latest version deleted: deletion files, or whole
   * fragments dropped; data files are never rewritten. A concurrent writer's change to the
   * same fragments makes it match again on the newer version, as pylance's `delete` does.
   */
  override def deleteWhere(predicates: Array[Predicate]): Unit = {
    val filter = translate(predicates).getOrElse(throw new IllegalArgumentException(
      s"Cannot delete from ${snapshot.root} where ${predicates.mkString(" AND ")}"
    ))
    TableDelete.where(
      io,
      snapshot.root,
      filter,
      if (predicates.isEmpty) "true" else predicates.map(_.toString).mkString(" AND ")
    )
  }
}

object LanceTable {

  /**
   * The table's name as Spark shows it: a path identifier, ``lance.`/path` ``, which Spark can
   * parse back as a multipart name (Spark 3.5 does when it fills an INSERT's missing columns).
   */
  def nameOf(root: String): String = s"lance.`${root.replace("`", "``")}`"
}
