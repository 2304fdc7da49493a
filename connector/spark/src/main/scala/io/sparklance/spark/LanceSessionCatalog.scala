package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{NoSuchTableException, TableAlreadyExistsException}
import org.apache.spark.sql.connector.catalog.{
  Column,
  DelegatingCatalogExtension,
  Identifier,
  StagedTable,
  StagingTableCatalog,
  SupportsWrite,
  Table,
  TableCapability,
  TableCatalog,
  TableChange
}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths, RoutingFileIO}
import io.sparklance.table.{LanceDataset, VersionSpec}
import io.sparklance.table.txn.WritePlan

/**
 * Lance tables in Spark's built-in catalog (`spark.sql.catalog.spark_catalog =
 * io.sparklance.spark.LanceSessionCatalog`), as Delta's catalog does it: `CREATE TABLE …
 * USING lance [LOCATION …]` registers the table in the session catalog (in-memory or Hive
 * metastore) and creates the dataset at its location — the warehouse directory for managed
 * tables, which DROP TABLE deletes; external tables keep their data. Tables of other
 * providers are the session catalog's, untouched. ``lance.`/path` `` names a dataset by path.
 */
class LanceSessionCatalog extends DelegatingCatalogExtension with StagingTableCatalog {

  private def spark: SparkSession = SparkSession.active

  private def fileIO: FileIO = new RoutingFileIO(spark.sessionState.newHadoopConf())

  private def isLance(props: util.Map[String, String]): Boolean =
    Option(props.get(TableCatalog.PROP_PROVIDER)).exists(_.equalsIgnoreCase("lance"))

  /** ``lance.`/path` ``: the dataset at an absolute path or URI. */
  private def isPath(ident: Identifier): Boolean =
    ident.namespace().length == 1 && ident.namespace()(0).equalsIgnoreCase("lance") &&
      (ident.name().startsWith("/") || ident.name().matches("^[A-Za-z][A-Za-z0-9+.-]*:/.*"))

  private def lanceTable(
      path0: String,
      version: VersionSpec,
      props: Map[String, String] = Map.empty
  ): LanceTable = {
    val path = Paths.stripTrailingSlash(path0)
    val io = fileIO
    if (WritePlan.existing(io, path).isEmpty) throw LanceErrors.pathNotFound(path)
    val conf = spark.sessionState.conf
    val read = LanceReadOptions.parse(
      new CaseInsensitiveStringMap(Map("path" -> path).asJava),
      java.time.ZoneId.of(conf.sessionLocalTimeZone),
      conf.filesMaxPartitionBytes
    )
    new LanceTable(
      LanceDataset.open(io, path).open(version),
      io,
      read,
      Map("path" -> path),
      writable = true,
      tableProperties = props
    )
  }

  private def load(ident: Identifier, version: VersionSpec, v1: => Table): Table =
    if (isPath(ident)) {
      try lanceTable(ident.name(), version)
      catch {
        case _: io.sparklance.LanceNotFoundException => throw new NoSuchTableException(ident)
      }
    } else {
      val t = v1
      if (!isLance(t.properties())) t
      else lanceTable(
        Option(t.properties().get(TableCatalog.PROP_LOCATION)).getOrElse(
          throw LanceErrors.unsupported(s"Lance table $ident has no location")
        ),
        version,
        t.properties().asScala.toMap
      )
    }

  override def loadTable(ident: Identifier): Table =
    load(ident, VersionSpec.Latest, super.loadTable(ident))

  override def loadTable(ident: Identifier, version: String): Table = {
    val v = version.trim
    val spec = if (v.nonEmpty && v.forall(_.isDigit)) VersionSpec.Number(v.toLong)
    else VersionSpec.TagName(v)
    load(ident, spec, super.loadTable(ident))
  }

  override def loadTable(ident: Identifier, timestampMicros: Long): Table =
    load(ident, VersionSpec.AsOf(timestampMicros), super.loadTable(ident))

  override def createTable(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table =
    createTable(ident, LanceSessionCatalog.columns(schema), partitions, properties)

  /**
   * A Lance table: refuses partitioning; at a LOCATION holding a dataset, registers that
   * dataset (its schema, which a given schema must equal); otherwise registers the table and
   * creates an empty dataset (version 1) at its location.
   */
  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table = {
    if (!isLance(properties)) return super.createTable(ident, columns, partitions, properties)
    checkPartitions(ident, partitions)
    val schema = LanceSessionCatalog.struct(columns)
    val io = fileIO
    val location0 = Option(properties.get(TableCatalog.PROP_LOCATION))
    val existing = location0.flatMap(l => WritePlan.existing(io, Paths.stripTrailingSlash(l)))
    existing match {
      case Some(s) =>
        val actual = SchemaConverter.toSpark(s.schema)
        if (
          schema.nonEmpty && schema.map(f => (f.name, f.dataType)) !=
            actual.map(f => (f.name, f.dataType))
        )
          throw LanceErrors.schemaMismatch(
            s.root,
            schema.fieldNames.mkString(", "),
            s"differ from the schema of the dataset there (${actual.simpleString})"
          )
        super.createTable(ident, LanceSessionCatalog.columns(actual), partitions, properties)
      case None =>
        if (schema.isEmpty)
          throw LanceErrors.unsupported(s"Cannot create $ident: no columns given and no Lance " +
            s"dataset at ${location0.getOrElse("its location")}")
        super.createTable(ident, columns, partitions, properties)
        val location = super.loadTable(ident).properties().get(TableCatalog.PROP_LOCATION)
        try create(location, schema, properties)
        catch { case e: Throwable => super.dropTable(ident); throw e }
    }
    loadTable(ident)
  }

  private def create(
      location: String,
      schema: StructType,
      properties: util.Map[String, String]
  ): Unit =
    EmptyTableWrite(
      fileIO,
      Paths.stripTrailingSlash(location),
      location,
      schema,
      properties.asScala.toMap,
      create = true
    )

  private def checkPartitions(ident: Identifier, partitions: Array[Transform]): Unit =
    if (partitions.nonEmpty)
      throw LanceErrors.unsupported(s"Cannot create $ident: Lance tables are not partitioned " +
        s"(PARTITIONED BY ${partitions.mkString(", ")})")

  private def locationOf(ident: Identifier, t: Table): String =
    Paths.stripTrailingSlash(Option(t.properties().get(TableCatalog.PROP_LOCATION)).getOrElse(
      throw LanceErrors.unsupported(s"Lance table $ident has no location")
    ))

  private def existingTable(ident: Identifier): Option[Table] =
    try Some(super.loadTable(ident))
    catch { case _: NoSuchTableException => None }

  /**
   * CREATE/REPLACE TABLE [AS SELECT] of a Lance table as one commit. Replacing a Lance table
   * overwrites its dataset (history kept) and keeps its catalog entry; a new table is entered
   * in the session catalog (which refuses a non-empty managed location) and its dataset then
   * written — created, or replaced when CREATE OR REPLACE names a LOCATION holding one; a
   * failed statement removes the entry again (an external table's data stays). A table of
   * another provider being replaced by a Lance table is dropped first.
   */
  private def stage(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String],
      replace: Boolean,
      orCreate: Boolean
  ): StagedTable = {
    if (isPath(ident))
      throw LanceErrors.unsupported(s"Cannot create or replace $ident: name a dataset path in " +
        "a catalog of io.sparklance.spark.LanceCatalog, or use df.write.format(\"lance\")")
    val props = properties.asScala.toMap
    val name = ident.toString
    existingTable(ident) match {
      case Some(t) if replace && isLance(t.properties()) =>
        checkPartitions(ident, partitions)
        val path = locationOf(ident, t)
        new LanceStagedTable(
          name,
          schema,
          LanceStagedTable.writeOptions(Map.empty, props, path),
          LanceStagedTable.intent(props, replace = true),
          replace = true,
          () => EmptyTableWrite(fileIO, path, name, schema, props, create = false)
        )
      case Some(_) if !replace => throw new TableAlreadyExistsException(ident)
      case None if replace && !orCreate => throw new NoSuchTableException(ident)
      case other =>
        checkPartitions(ident, partitions)
        if (other.isDefined) super.dropTable(ident)
        super.createTable(ident, LanceSessionCatalog.columns(schema), partitions, properties)
        val path = locationOf(ident, super.loadTable(ident))
        val overwrite = replace && WritePlan.existing(fileIO, path).isDefined
        new LanceStagedTable(
          name,
          schema,
          LanceStagedTable.writeOptions(Map.empty, props, path),
          LanceStagedTable.intent(props, overwrite),
          overwrite,
          () => EmptyTableWrite(fileIO, path, name, schema, props, create = !overwrite),
          () => super.dropTable(ident)
        )
    }
  }

  /** Another provider's table: created at once, as a catalog without staging would. */
  private def unstaged(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String],
      replace: Boolean
  ): StagedTable = {
    if (replace) super.dropTable(ident)
    new LanceSessionCatalog.CreatedTable(
      super.createTable(ident, LanceSessionCatalog.columns(schema), partitions, properties),
      () => super.dropTable(ident)
    )
  }

  override def stageCreate(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable =
    if (!isLance(properties)) unstaged(ident, schema, partitions, properties, replace = false)
    else stage(ident, schema, partitions, properties, replace = false, orCreate = false)

  override def stageReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable =
    if (!isLance(properties)) {
      if (existingTable(ident).isEmpty) throw new NoSuchTableException(ident)
      unstaged(ident, schema, partitions, properties, replace = true)
    } else stage(ident, schema, partitions, properties, replace = true, orCreate = false)

  override def stageCreateOrReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable =
    if (!isLance(properties)) {
      unstaged(ident, schema, partitions, properties, existingTable(ident).isDefined)
    } else stage(ident, schema, partitions, properties, replace = true, orCreate = true)

  /**
   * ALTER TABLE of a Lance table changes its dataset (see LanceTableChanges); the session
   * catalog keeps only where the table is. Other tables are the session catalog's.
   */
  override def alterTable(ident: Identifier, changes: TableChange*): Table =
    if (isPath(ident)) {
      LanceTableChanges(fileIO, Paths.stripTrailingSlash(ident.name()), ident.toString, changes)
      loadTable(ident)
    } else {
      val t = super.loadTable(ident)
      if (!isLance(t.properties())) super.alterTable(ident, changes: _*)
      else {
        val path = Option(t.properties().get(TableCatalog.PROP_LOCATION)).getOrElse(
          throw LanceErrors.unsupported(s"Lance table $ident has no location")
        )
        LanceTableChanges(fileIO, Paths.stripTrailingSlash(path), ident.toString, changes)
        loadTable(ident)
      }
    }

  override def dropTable(ident: Identifier): Boolean =
    if (isPath(ident))
      throw LanceErrors.unsupported(s"DROP TABLE of the path $ident would delete the dataset " +
        "there; delete the directory itself if that is meant")
    else super.dropTable(ident)
}

object LanceSessionCatalog {

  /** A table of another provider, created as the statement began; dropped if it fails. */
  private class CreatedTable(table: Table, drop: () => Unit) extends StagedTable
      with SupportsWrite {
    override def name(): String = table.name()
    @scala.annotation.nowarn("cat=deprecation")
    override def schema(): StructType = table.schema()
    override def columns(): Array[Column] = table.columns()
    override def properties(): util.Map[String, String] = table.properties()
    override def capabilities(): util.Set[TableCapability] = table.capabilities()
    override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = table match {
      case w: SupportsWrite => w.newWriteBuilder(info)
      case _ => throw LanceErrors.unsupported(s"Cannot write to ${table.name()}: its provider " +
          "does not support writes through this catalog")
    }
    override def commitStagedChanges(): Unit = ()
    override def abortStagedChanges(): Unit = drop()
  }

  private[spark] def columns(schema: StructType): Array[Column] = schema.fields.map { f =>
    Column.create(f.name, f.dataType, f.nullable, f.getComment().orNull, null)
  }

  private[spark] def struct(columns: Array[Column]): StructType = StructType(columns.map { c =>
    val f = org.apache.spark.sql.types.StructField(c.name(), c.dataType(), c.nullable())
    Option(c.comment()).fold(f)(f.withComment)
  })
}
