package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{
  NoSuchNamespaceException,
  NoSuchTableException,
  TableAlreadyExistsException
}
import org.apache.spark.sql.connector.catalog.{
  Identifier,
  NamespaceChange,
  StagedTable,
  StagingTableCatalog,
  SupportsNamespaces,
  Table,
  TableCatalog,
  TableChange
}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.{LanceConcurrentModificationException, LanceErrors}
import io.sparklance.spark.errors.SparkErrors
import io.sparklance.storage.{FileIO, FileTrees, Paths, RoutingFileIO}
import io.sparklance.spark.shims.LanceProcedureCatalog
import io.sparklance.table.{DatasetLayout, LanceDataset, VersionSpec}
import io.sparklance.table.namespace.DirectoryNamespace

/**
 * Lance datasets as Spark SQL tables: `spark.sql.catalog.<name> = io.sparklance.spark.LanceCatalog`.
 *
 *  - Path identifiers: ``SELECT * FROM lance.`/data/events.lance` `` (any Hadoop URI) reads,
 *    inserts into, deletes from and time-travels the dataset at that path.
 *  - With option `root` (any Hadoop file system URI), the catalog is pylance's directory
 *    namespace at that root ([[DirectoryNamespace]]): namespaces and tables recorded in its
 *    `__manifest` table, plus `<root>/<name>.lance` datasets in the root namespace.
 *    CREATE/DROP NAMESPACE, CREATE/SHOW/DROP TABLE (DROP deletes the dataset, as the
 *    namespace's `drop_table` does); what either side creates, the other lists and opens.
 *
 * On Spark 4, `CALL <catalog>.system.compact_files(table => ...)` and the other maintenance
 * procedures (LanceProcedures) run on its tables or on paths.
 *
 * Other catalog options (`fs.*`, ...) are storage settings for every table; table options
 * (`OPTIONS (...)`) add write options such as `data_storage_version`. CREATE/REPLACE TABLE
 * ... AS SELECT and `writeTo(...).create()/replace()` commit one version holding the data,
 * as pylance's `write_dataset` does.
 */
class LanceCatalog extends StagingTableCatalog with SupportsNamespaces
    with LanceProcedureCatalog {
  private var catalogName: String = _
  private var options: Map[String, String] = Map.empty
  private var root: Option[String] = None

  override def initialize(name: String, opts: CaseInsensitiveStringMap): Unit = {
    catalogName = name
    SparkErrors.spark(LanceOptionNames.check(opts))
    options = opts.asCaseSensitiveMap().asScala.toMap
    root = Option(opts.get("root")).filter(_.nonEmpty).map(Paths.stripTrailingSlash)
  }

  override def name(): String = catalogName

  private def spark: SparkSession = SparkSession.active

  private def fileIO: FileIO = new RoutingFileIO(
    spark.sessionState.newHadoopConfWithOptions(options - "root")
  )

  /** A dataset path given as the table name: absolute, or a URI with a scheme. */
  private def isPath(ident: Identifier): Boolean =
    ident.namespace().isEmpty &&
      (ident.name().startsWith("/") || ident.name().matches("^[A-Za-z][A-Za-z0-9+.-]*:/.*"))

  private def namespace: DirectoryNamespace = new DirectoryNamespace(
    fileIO,
    root.getOrElse(throw LanceErrors.invalidOption(
      "root",
      "",
      s"catalog $catalogName has " +
        "no root directory; name tables by path: " + catalogName + ".`/path/to/dataset`"
    ))
  )

  private def id(ident: Identifier): Seq[String] = ident.namespace().toSeq :+ ident.name()

  /** Where the dataset of an existing table `ident` is. */
  private def location(ident: Identifier): String =
    if (isPath(ident)) Paths.stripTrailingSlash(ident.name())
    else {
      if (root.isEmpty) throw new NoSuchTableException(ident)
      val ns = namespace
      if (!ns.namespaceExists(ident.namespace().toSeq))
        throw new NoSuchNamespaceException(ident.namespace())
      ns.tableLocation(id(ident)).getOrElse(throw new NoSuchTableException(ident))
    }

  private def exists(path: String): Boolean = DatasetLayout.hasDataset(fileIO, path)

  /**
   * Why `ident`, at `path`, holds no table: a path names its own problem as the DataFrame
   * reader does (no such path, or not a Lance dataset); other names are Spark's not-found.
   */
  private def notFound(ident: Identifier, path: String): Exception = {
    if (isPath(ident)) SparkErrors.spark(LanceDataset.open(fileIO, path).open(VersionSpec.Latest))
    new NoSuchTableException(ident)
  }

  private def load(ident: Identifier, version: VersionSpec): Table = SparkErrors.spark {
    val path = location(ident)
    if (!exists(path)) throw notFound(ident, path)
    val tableOptions = (options - "root") + ("path" -> path)
    val conf = spark.sessionState.conf
    val read = LanceReadOptions.parse(
      new CaseInsensitiveStringMap(tableOptions.asJava),
      java.time.ZoneId.of(conf.sessionLocalTimeZone),
      conf.filesMaxPartitionBytes
    )
    val io = fileIO
    // A named table's location is the namespace's choice: SHOW CREATE TABLE leaves it out.
    val owned = if (isPath(ident)) Map.empty[String, String]
    else Map(TableCatalog.PROP_IS_MANAGED_LOCATION -> "true")
    new LanceTable(
      LanceDataset.open(io, path).open(version),
      io,
      read,
      tableOptions,
      writable = true,
      owned
    )
  }

  override def loadTable(ident: Identifier): Table =
    try load(ident, VersionSpec.Latest)
    catch {
      case e @ (_: NoSuchTableException | _: NoSuchNamespaceException) =>
        metadataTable(ident).getOrElse(throw e)
    }

  /**
   * ``lance.db.t.versions``, ``lance.`/path`.fragments``: a metadata table (versions, tags,
   * fragments, indices) of the table the rest of the name names, when no table has the name.
   */
  private def metadataTable(ident: Identifier): Option[Table] =
    MetadataTable.named(ident.name()).filter(_ => ident.namespace().nonEmpty).flatMap { kind =>
      val ns = ident.namespace()
      val table = Identifier.of(ns.init, ns.last)
      scala.util.Try(location(table)).toOption.filter(exists)
        .map(path => new LanceMetadataTable(LanceDataset.open(fileIO, path), kind))
    }

  /** `VERSION AS OF n` (a version number, or a tag name as pylance's `version=` takes). */
  override def loadTable(ident: Identifier, version: String): Table = {
    val v = version.trim
    load(
      ident,
      if (v.nonEmpty && v.forall(_.isDigit)) VersionSpec.Number(v.toLong)
      else VersionSpec.TagName(v)
    )
  }

  /** `TIMESTAMP AS OF t`: the newest version committed at or before `t` (microseconds). */
  override def loadTable(ident: Identifier, timestampMicros: Long): Table =
    load(ident, VersionSpec.AsOf(timestampMicros))

  override def tableExists(ident: Identifier): Boolean =
    try exists(location(ident))
    catch { case _: NoSuchTableException | _: NoSuchNamespaceException => false }

  override def listTables(ns: Array[String]): Array[Identifier] =
    if (root.isEmpty) {
      if (ns.nonEmpty) throw new NoSuchNamespaceException(ns)
      Array.empty
    } else {
      val n = namespace
      if (!n.namespaceExists(ns.toSeq)) throw new NoSuchNamespaceException(ns)
      n.listTables(ns.toSeq).map(t => Identifier.of(ns, t)).toArray
    }

  override def listNamespaces(): Array[Array[String]] = listNamespaces(Array.empty[String])

  override def listNamespaces(parent: Array[String]): Array[Array[String]] =
    if (root.isEmpty) Array.empty
    else {
      val n = namespace
      if (!n.namespaceExists(parent.toSeq)) throw new NoSuchNamespaceException(parent)
      n.listNamespaces(parent.toSeq).map(c => parent :+ c).toArray
    }

  override def namespaceExists(ns: Array[String]): Boolean =
    ns.isEmpty || (root.isDefined && namespace.namespaceExists(ns.toSeq))

  override def loadNamespaceMetadata(ns: Array[String]): util.Map[String, String] =
    if (namespaceExists(ns)) new util.HashMap[String, String]()
    else throw new NoSuchNamespaceException(ns)

  override def createNamespace(ns: Array[String], metadata: util.Map[String, String]): Unit = {
    val n = namespace
    if (n.namespaceExists(ns.toSeq))
      throw new org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException(ns)
    n.createNamespace(ns.toSeq)
  }

  override def alterNamespace(ns: Array[String], changes: NamespaceChange*): Unit =
    throw LanceErrors.unsupported(s"ALTER NAMESPACE ${ns.mkString(".")} is not supported: " +
      "pylance's directory namespace keeps no namespace properties")

  /** Drops an empty namespace; with CASCADE its tables (and their data) first. */
  override def dropNamespace(ns: Array[String], cascade: Boolean): Boolean = {
    if (!namespaceExists(ns)) return false
    if (cascade) listTables(ns).foreach(dropTable)
    val n = namespace
    if (!cascade && n.listTables(ns.toSeq).nonEmpty)
      throw new org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException(ns)
    n.dropNamespace(ns.toSeq)
    true
  }

  /**
   * Creates an empty dataset (version 1, no fragments, as pylance writes an empty table)
   * with the table's schema. Partitioning is refused: Lance datasets have none.
   */
  override def createTable(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Table = {
    checkCreatable(ident, partitions, properties)
    if (tableExists(ident)) throw new TableAlreadyExistsException(ident)
    val path = newLocation(ident)
    try EmptyTableWrite(
        fileIO,
        path,
        s"$catalogName.$ident",
        schema,
        properties.asScala.toMap,
        create = true
      )
    catch {
      case e: Throwable =>
        forget(ident)
        throw (e match {
          case _: LanceConcurrentModificationException => new TableAlreadyExistsException(ident)
          case other => other
        })
    }
    loadTable(ident)
  }

  /** Records a new table in the namespace and returns where its dataset goes. */
  private def newLocation(ident: Identifier): String =
    if (isPath(ident)) Paths.stripTrailingSlash(ident.name())
    else {
      if (root.isEmpty) throw new NoSuchNamespaceException(ident.namespace())
      val n = namespace
      if (!n.namespaceExists(ident.namespace().toSeq))
        throw new NoSuchNamespaceException(ident.namespace())
      n.addTable(id(ident))
    }

  /** Removes a table's namespace entry (not its data). */
  private def forget(ident: Identifier): Unit =
    if (!isPath(ident) && root.isDefined) namespace.removeTable(id(ident))

  private def checkCreatable(
      ident: Identifier,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): Unit = {
    if (partitions.nonEmpty)
      throw LanceErrors.unsupported(s"Cannot create ${ident}: Lance tables are not partitioned " +
        s"(PARTITIONED BY ${partitions.mkString(", ")})")
    Option(properties.get(TableCatalog.PROP_LOCATION)).foreach { l =>
      throw LanceErrors.unsupported(s"Cannot create $ident at LOCATION '$l': in catalog " +
        s"$catalogName a table's location is its identifier (a path, or <root>/<name>.lance)")
    }
  }

  /**
   * A table the statement creates or replaces in one commit: its write's, or the schema
   * alone when there is no AS SELECT.
   */
  private def staged(
      ident: Identifier,
      schema: StructType,
      properties: util.Map[String, String],
      replace: Boolean
  ): StagedTable = {
    val existed = replace && tableExists(ident)
    val path = if (existed) location(ident) else newLocation(ident)
    val props = properties.asScala.toMap
    val name = s"$catalogName.$ident"
    new LanceStagedTable(
      name,
      schema,
      LanceStagedTable.writeOptions(options - "root", props, path),
      LanceStagedTable.intent(props, replace),
      replace,
      () => EmptyTableWrite(fileIO, path, name, schema, props, create = !replace || !exists(path)),
      () => if (!existed && !exists(path)) forget(ident)
    )
  }

  override def stageCreate(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = {
    checkCreatable(ident, partitions, properties)
    if (tableExists(ident)) throw new TableAlreadyExistsException(ident)
    staged(ident, schema, properties, replace = false)
  }

  override def stageReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = {
    checkCreatable(ident, partitions, properties)
    if (!tableExists(ident)) throw new NoSuchTableException(ident)
    staged(ident, schema, properties, replace = true)
  }

  override def stageCreateOrReplace(
      ident: Identifier,
      schema: StructType,
      partitions: Array[Transform],
      properties: util.Map[String, String]
  ): StagedTable = {
    checkCreatable(ident, partitions, properties)
    staged(ident, schema, properties, replace = true)
  }

  /** ALTER TABLE: each kind of change one Lance transaction (see LanceTableChanges). */
  override def alterTable(ident: Identifier, changes: TableChange*): Table = {
    val path = location(ident)
    if (!exists(path)) throw notFound(ident, path)
    LanceTableChanges(fileIO, path, s"$catalogName.$ident", changes)
    loadTable(ident)
  }

  /**
   * Drops a table of the root namespace and deletes its dataset, as pylance's directory
   * namespace `drop_table` does. A path identifier names data outside any namespace: it is
   * never deleted by DROP TABLE.
   */
  override def dropTable(ident: Identifier): Boolean = {
    if (isPath(ident))
      throw LanceErrors.unsupported(s"DROP TABLE of the path $ident would delete the dataset " +
        "there; delete the directory itself if that is meant")
    val path =
      try location(ident)
      catch {
        case _: NoSuchTableException | _: NoSuchNamespaceException => return false
      }
    forget(ident)
    if (fileIO.isDirectory(path)) FileTrees.delete(fileIO, path)
    true
  }

  /** PURGE changes nothing: a dropped table's dataset is deleted anyway. */
  override def purgeTable(ident: Identifier): Boolean = dropTable(ident)

  /**
   * A procedure's `table`: a dataset path, or the name of a table of this catalog
   * (`db.t`, `t`; backquotes allowed).
   */
  override protected def procedureTablePath(table: String): String = {
    val t = table.trim
    val ident =
      if (LanceCatalog.isPathName(t)) Identifier.of(Array.empty[String], t)
      else {
        val parts = spark.sessionState.sqlParser.parseMultipartIdentifier(t)
        Identifier.of(parts.init.toArray, parts.last)
      }
    val path = location(ident)
    if (!exists(path)) throw notFound(ident, path)
    path
  }

  /**
   * ALTER TABLE ... RENAME TO: the namespace's record renamed (see
   * [[DirectoryNamespace.renameTable]]); an unqualified new name stays in the table's
   * namespace, as Spark's session catalog renames. Path tables are renamed by moving them.
   */
  override def renameTable(from: Identifier, to0: Identifier): Unit = {
    if (isPath(from) || isPath(to0))
      throw LanceErrors.unsupported(s"Cannot rename ${from.name()} to ${to0.name()}: a table " +
        "named by its path is renamed by moving its directory")
    val to = if (to0.namespace().isEmpty) Identifier.of(from.namespace(), to0.name()) else to0
    if (!exists(location(from))) throw new NoSuchTableException(from)
    if (tableExists(to)) throw new TableAlreadyExistsException(to)
    if (!namespaceExists(to.namespace())) throw new NoSuchNamespaceException(to.namespace())
    namespace.renameTable(id(from), id(to))
    org.slf4j.LoggerFactory.getLogger(classOf[LanceCatalog])
      .info("Renamed table {} to {} in {}", from, to, root.getOrElse(""))
  }
}

object LanceCatalog {

  /** The directory suffix of root-namespace tables in pylance's directory namespace. */
  val Suffix = ".lance"

  /** Whether a procedure's or function's `table` argument is a path (`/…` or `scheme:/…`). */
  def isPathName(table: String): Boolean =
    table.startsWith("/") || table.matches("^[A-Za-z][A-Za-z0-9+.-]*:/.*")
}
