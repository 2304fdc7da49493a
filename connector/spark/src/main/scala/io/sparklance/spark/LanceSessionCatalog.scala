package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException
import org.apache.spark.sql.connector.catalog.{Column, DelegatingCatalogExtension, Identifier,
  Table, TableCatalog, TableChange}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.format.writer.FileVersion
import io.sparklance.storage.{FileIO, Paths, RoutingFileIO}
import io.sparklance.spark.write.{LanceWriteOptions, SparkToLance}
import io.sparklance.table.{LanceDataset, VersionSpec}
import io.sparklance.table.txn.{CommitOptions, WritePlan}

/**
 * Lance tables in Spark's built-in catalog (`spark.sql.catalog.spark_catalog =
 * io.sparklance.spark.LanceSessionCatalog`), as Delta's catalog does it: `CREATE TABLE …
 * USING lance [LOCATION …]` registers the table in the session catalog (in-memory or Hive
 * metastore) and creates the dataset at its location — the warehouse directory for managed
 * tables, which DROP TABLE deletes; external tables keep their data. Tables of other
 * providers are the session catalog's, untouched. ``lance.`/path` `` names a dataset by path.
 */
class LanceSessionCatalog extends DelegatingCatalogExtension {

  private def spark: SparkSession = SparkSession.active

  private def fileIO: FileIO = new RoutingFileIO(spark.sessionState.newHadoopConf())

  private def isLance(props: util.Map[String, String]): Boolean =
    Option(props.get(TableCatalog.PROP_PROVIDER)).exists(_.equalsIgnoreCase("lance"))

  /** ``lance.`/path` ``: the dataset at an absolute path or URI. */
  private def isPath(ident: Identifier): Boolean =
    ident.namespace().length == 1 && ident.namespace()(0).equalsIgnoreCase("lance") &&
      (ident.name().startsWith("/") || ident.name().matches("^[A-Za-z][A-Za-z0-9+.-]*:/.*"))

  private def lanceTable(path0: String, version: VersionSpec,
      props: Map[String, String] = Map.empty): LanceTable = {
    val path = Paths.stripTrailingSlash(path0)
    val io = fileIO
    if (WritePlan.existing(io, path).isEmpty) throw LanceErrors.pathNotFound(path)
    val conf = spark.sessionState.conf
    val read = LanceReadOptions.parse(new CaseInsensitiveStringMap(Map("path" -> path).asJava),
      java.time.ZoneId.of(conf.sessionLocalTimeZone), conf.filesMaxPartitionBytes)
    new LanceTable(LanceDataset.open(io, path).open(version), io, read, Map("path" -> path),
      writable = true, tableProperties = props)
  }

  private def load(ident: Identifier, version: VersionSpec, v1: => Table): Table =
    if (isPath(ident)) {
      try lanceTable(ident.name(), version)
      catch { case _: io.sparklance.LanceNotFoundException => throw new NoSuchTableException(ident) }
    } else {
      val t = v1
      if (!isLance(t.properties())) t
      else lanceTable(Option(t.properties().get(TableCatalog.PROP_LOCATION)).getOrElse(
        throw LanceErrors.unsupported(s"Lance table $ident has no location")), version,
        t.properties().asScala.toMap)
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

  override def createTable(ident: Identifier, schema: StructType, partitions: Array[Transform],
      properties: util.Map[String, String]): Table =
    createTable(ident, LanceSessionCatalog.columns(schema), partitions, properties)

  /**
   * A Lance table: refuses partitioning; at a LOCATION holding a dataset, registers that
   * dataset (its schema, which a given schema must equal); otherwise registers the table and
   * creates an empty dataset (version 1) at its location.
   */
  override def createTable(ident: Identifier, columns: Array[Column], partitions: Array[Transform],
      properties: util.Map[String, String]): Table = {
    if (!isLance(properties)) return super.createTable(ident, columns, partitions, properties)
    if (partitions.nonEmpty)
      throw LanceErrors.unsupported(s"Cannot create $ident: Lance tables are not partitioned " +
        s"(PARTITIONED BY ${partitions.mkString(", ")})")
    val schema = LanceSessionCatalog.struct(columns)
    val io = fileIO
    val location0 = Option(properties.get(TableCatalog.PROP_LOCATION))
    val existing = location0.flatMap(l => WritePlan.existing(io, Paths.stripTrailingSlash(l)))
    existing match {
      case Some(s) =>
        val actual = SchemaConverter.toSpark(s.schema)
        if (schema.nonEmpty && schema.map(f => (f.name, f.dataType)) !=
            actual.map(f => (f.name, f.dataType)))
          throw LanceErrors.schemaMismatch(s.root, schema.fieldNames.mkString(", "),
            s"differ from the schema of the dataset there (${actual.simpleString})")
        super.createTable(ident, LanceSessionCatalog.columns(actual), partitions,
          properties)
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

  private def create(location: String, schema: StructType,
      properties: util.Map[String, String]): Unit = {
    val options = LanceTableChanges.createOptions(properties.asScala.toMap)
    val version = options.get(LanceWriteOptions.DataStorageVersion).map { v =>
      FileVersion.parse(v).getOrElse(throw LanceErrors.invalidOption(
        LanceWriteOptions.DataStorageVersion, v, "expected 2.0, 2.1, 2.2 or stable"))
    }
    val stable = options.get(LanceWriteOptions.EnableStableRowIds)
      .exists(_.trim.equalsIgnoreCase("true"))
    val path = Paths.stripTrailingSlash(location)
    WritePlan.replace(path, None, SparkToLance.fields(
      ColumnEncodingProperties.applyTo(schema, options, path),
      version.getOrElse(FileVersion.Default)), version, mustCreate = true,
      LanceTableChanges.configOf(properties.asScala.toMap))
      .commit(fileIO, Nil, CommitOptions(enableStableRowIds = stable))
  }

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
          throw LanceErrors.unsupported(s"Lance table $ident has no location"))
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
  private[spark] def columns(schema: StructType): Array[Column] = schema.fields.map { f =>
    Column.create(f.name, f.dataType, f.nullable, f.getComment().orNull, null)
  }

  private[spark] def struct(columns: Array[Column]): StructType = StructType(columns.map { c =>
    val f = org.apache.spark.sql.types.StructField(c.name(), c.dataType(), c.nullable())
    Option(c.comment()).fold(f)(f.withComment)
  })
}
