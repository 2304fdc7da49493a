package io.sparklance.spark

import org.apache.spark.sql.connector.catalog.{TableCatalog, TableChange}
import org.apache.spark.sql.connector.catalog.TableChange._
import org.apache.spark.sql.types.{StructField, StructType}
import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.format.writer.{FileVersion, SchemaProtos}
import io.sparklance.storage.{BestEffort, FileIO}
import io.sparklance.spark.write.SparkToLance
import io.sparklance.table.{LanceDataset, PrimaryKey, SchemaEdits, Snapshot, VersionSpec}
import io.sparklance.table.txn.{
  ColumnCast,
  Committer,
  Merge,
  Operation,
  Project,
  UpdateConfig,
  UpdateMap
}

/**
 * ALTER TABLE on a Lance dataset: Spark's table changes as Lance transactions, each kind as
 * pylance commits it —
 *  - SET/UNSET TBLPROPERTIES: the table config (`ds.config()`), one UpdateConfig;
 *  - ADD COLUMNS: new nullable top-level columns with no values, one Merge changing only the
 *    schema (pylance's `add_columns(pa.field(...))`);
 *  - DROP COLUMNS, RENAME COLUMN, ALTER COLUMN ... DROP NOT NULL: one Project
 *    (`drop_columns`, `alter_columns`);
 *  - ALTER COLUMN ... COMMENT: the field's `comment` metadata, one UpdateConfig;
 *  - ALTER COLUMN ... TYPE (widenings): the column rewritten, one Merge (`alter_columns`).
 * Consecutive changes of one kind are one commit. Each is built from the newest version and,
 * should another writer's commit make it a retryable conflict, built again from the newer
 * one (pylance's `add_columns`/`drop_columns` leave that to the caller). Changes Lance
 * cannot make (narrowing types, positions, defaults, NOT NULL) are refused, naming them.
 */
object LanceTableChanges {
  private val log = LoggerFactory.getLogger(getClass)

  /** The version a table was loaded at, shown by DESCRIBE EXTENDED and SHOW TBLPROPERTIES. */
  val VersionKey = "lance.version"

  /** The table's file format version, shown likewise; a CREATE's TBLPROPERTIES may set it. */
  val FormatKey = "lance.data_storage_version"

  /**
   * Properties a catalog owns or Lance derives from the table: never stored in, or changed
   * through, the table config.
   */
  val Reserved: Set[String] = Set(
    TableCatalog.PROP_LOCATION,
    TableCatalog.PROP_PROVIDER,
    TableCatalog.PROP_EXTERNAL,
    TableCatalog.PROP_IS_MANAGED_LOCATION,
    "path",
    VersionKey,
    FormatKey,
    PrimaryKeyKey
  )

  /**
   * The table's unenforced primary key, its top-level columns comma-separated (shown; a
   * CREATE's TBLPROPERTIES or ALTER TABLE SET TBLPROPERTIES set it once).
   */
  val PrimaryKeyKey = "lance.primary_key"

  /**
   * A CREATE's write options: its OPTIONS, with the file version its TBLPROPERTIES name
   * (`lance.data_storage_version`, which SHOW CREATE TABLE prints) unless OPTIONS name one,
   * and its per-column encodings (see [[ColumnEncodingProperties]]).
   */
  def createOptions(properties: Map[String, String]): Map[String, String] = {
    val opts = properties.collect {
      case (k, v) if k.startsWith(TableCatalog.OPTION_PREFIX) =>
        k.stripPrefix(TableCatalog.OPTION_PREFIX) -> v
    }
    val key = io.sparklance.spark.write.LanceWriteOptions.DataStorageVersion
    val encodings = properties.filter { case (k, _) => ColumnEncodingProperties.isEncodingKey(k) }
    def fromProperty(
        o: Map[String, String],
        property: String,
        option: String,
        same: (String, String) => Boolean
    ) = properties.get(property).fold(o) { v =>
      o.get(option).filterNot(same(_, v)).foreach { x =>
        throw LanceErrors.invalidOption(option, x, s"TBLPROPERTIES set $property to $v")
      }
      o + (option -> v)
    }
    val withFormat = fromProperty(opts, FormatKey, key, _.trim equalsIgnoreCase _.trim)
    encodings ++ fromProperty(
      withFormat,
      PrimaryKeyKey,
      io.sparklance.spark.write.LanceWriteOptions.PrimaryKey,
      (a, b) => LanceTableChanges.keyColumns(a) == LanceTableChanges.keyColumns(b)
    )
  }

  /** The columns of a `lance.primary_key` / `primary_key` value. */
  def keyColumns(v: String): Seq[String] = v.split(',').map(_.trim).filter(_.nonEmpty).toSeq

  /**
   * The table config a CREATE TABLE's properties set: its TBLPROPERTIES, without table
   * options (`option.*`), what the catalog owns and the owner Spark records.
   */
  def configOf(properties: Map[String, String]): Map[String, String] = properties.filter {
    case (k, _) => !k.startsWith(TableCatalog.OPTION_PREFIX) && !Reserved(k.toLowerCase) &&
      k != TableCatalog.PROP_OWNER && !ColumnEncodingProperties.isEncodingKey(k)
  }

  /** The Lance field metadata key a column comment is kept under. */
  val CommentKey = "comment"

  def apply(fileIO: FileIO, path: String, table: String, changes: Seq[TableChange]): Unit =
    groups(table, changes).foreach { group =>
      val read = LanceDataset.open(fileIO, path).open(VersionSpec.Latest)
      val r =
        if (kind(table, group.head) == Retype) retype(fileIO, read, table, group)
        else new Committer(fileIO, path).execute(read)(s => operation(s, table, group))
      log.info(
        "ALTER TABLE {}: {} change(s) committed as version {} of {}",
        table,
        Int.box(group.size),
        Long.box(r.version),
        path
      )
    }

  private sealed trait Kind
  private case object Config extends Kind
  private case object Add extends Kind
  private case object Reshape extends Kind
  private case object Comment extends Kind
  private case object Retype extends Kind
  private case object Key extends Kind

  private def kind(table: String, c: TableChange): Kind = c match {
    case p: SetProperty if p.property() == PrimaryKeyKey => Key
    case p: RemoveProperty if p.property() == PrimaryKeyKey =>
      refuse(table, s"removing '$PrimaryKeyKey'", "a primary key, once set, stays")
    case _: SetProperty | _: RemoveProperty => Config
    case _: AddColumn => Add
    case _: DeleteColumn | _: RenameColumn | _: UpdateColumnNullability => Reshape
    case _: UpdateColumnComment => Comment
    case _: UpdateColumnType => Retype
    case _: UpdateColumnPosition => refuse(
        table,
        "moving a column (FIRST/AFTER)",
        "Lance keeps columns in the order they were added"
      )
    case other => refuse(table, other.getClass.getSimpleName, "Lance tables do not support it")
  }

  private def refuse(table: String, what: String, why: String): Nothing =
    throw LanceErrors.unsupported(s"ALTER TABLE $table: $what is not supported: $why")

  /** Runs of consecutive changes of one kind, in statement order. */
  private def groups(table: String, changes: Seq[TableChange]): Seq[Seq[TableChange]] =
    changes.foldLeft(List.empty[(Kind, Vector[TableChange])]) { (acc, c) =>
      val k = kind(table, c)
      acc match {
        case (`k`, run) :: rest => (k, run :+ c) :: rest
        case _ => (k, Vector(c)) :: acc
      }
    }.reverse.map(_._2)

  private def operation(s: Snapshot, table: String, group: Seq[TableChange]): Operation =
    kind(table, group.head) match {
      case Config => config(s, table, group)
      case Key => PrimaryKey.install(
          s,
          keyColumns(group.last.asInstanceOf[SetProperty].value())
            .map(Seq(_))
        )
      case Add => add(s, table, group.map(_.asInstanceOf[AddColumn]))
      case Reshape => reshape(s, table, group)
      case Retype => throw new IllegalStateException("ALTER COLUMN TYPE writes data; see retype")
      case Comment =>
        val edits = SchemaEdits(s)
        UpdateConfig(fieldMetadata = group.map { case c: UpdateColumnComment =>
          val f = edits.find(c.fieldNames().toSeq).getOrElse(throw missing(s, c.fieldNames()))
          f.getId -> UpdateMap.set(Map(CommentKey -> c.newComment()))
        }.toMap)
    }

  /**
   * ALTER COLUMN ... TYPE: the cast columns written as one new data file per fragment, then
   * one Merge (pylance's `alter_columns` with `data_type`; see [[ColumnCast]]). Runs on the
   * driver, reading and writing only those columns; not retried on a conflict, as pylance's.
   */
  private def retype(
      fileIO: FileIO,
      s: Snapshot,
      table: String,
      group: Seq[TableChange]
  ): io.sparklance.table.txn.CommitResult = {
    val version = FileVersion.ofDataset(s.dataStorageVersion, s.root)
    val casts = group.map { case c: UpdateColumnType =>
      val name = c.fieldNames().mkString(".")
      if (c.fieldNames().length != 1)
        refuse(
          table,
          s"changing the type of nested field '$name'",
          "Lance casts top-level " +
            "columns only"
        )
      name -> SparkToLance.fields(StructType(Seq(StructField(name, c.newDataType()))), version)
        .head.logicalType
    }
    val (merge, files) = ColumnCast.write(fileIO, s, casts)
    try new Committer(fileIO, s.root).commit(Some(s), merge)
    catch {
      case e: Throwable =>
        files.foreach(BestEffort.delete(fileIO, _))
        throw e
    }
  }

  private def missing(s: Snapshot, names: Array[String]) = LanceErrors.invalidSchemaChange(
    s.root,
    s"column '${names.mkString(".")}' does not exist"
  )

  private def config(s: Snapshot, table: String, group: Seq[TableChange]): Operation = {
    val entries = group.map {
      case p: SetProperty => p.property() -> Some(p.value())
      case p: RemoveProperty => p.property() -> None
    }
    entries.map(_._1).filter(k => ColumnEncodingProperties.isEncodingKey(k)).foreach { k =>
      refuse(
        table,
        s"changing property '$k'",
        "a column's encoding is chosen when the table " +
          "is created; its data files keep it"
      )
    }
    entries.map(_._1).filter(k => Reserved(k.toLowerCase)).foreach { k =>
      refuse(table, s"changing property '$k'", "the catalog or Lance sets it")
    }
    UpdateConfig(config = Some(UpdateMap(entries)))
  }

  /**
   * ADD COLUMNS: nullable columns with no values, top-level or inside a struct (pylance's
   * `add_columns` with the struct given again), each after the last column at its level.
   */
  private def add(s: Snapshot, table: String, cols: Seq[AddColumn]): Operation = {
    val version = FileVersion.ofDataset(s.dataStorageVersion, s.root)
    val (edits, _) = cols.foldLeft((SchemaEdits(s), SchemaEdits.firstFreeId(s.manifest))) {
      case ((edits, next), c) =>
        val path = c.fieldNames().toSeq
        val name = path.mkString(".")
        val siblings = if (path.size == 1) edits.fields.filter(_.getParentId == -1)
        else edits.find(path.init).toSeq.flatMap(p => edits.fields.filter(_.getParentId == p.getId))
        val atEnd = c.position() match {
          case null => true
          case a: After => siblings.lastOption.exists(_.getName == a.column())
          case _ => false
        }
        if (!atEnd)
          refuse(
            table,
            s"adding column '$name' at ${c.position()}",
            "Lance adds columns after the last one"
          )
        if (c.defaultValue() != null)
          refuse(table, s"adding column '$name' with a DEFAULT", "existing rows would need it")
        if (!c.isNullable)
          refuse(
            table,
            s"adding column '$name' as NOT NULL",
            "the existing rows have no value for it"
          )
        val f = StructField(path.last, c.dataType(), nullable = true)
        val sf = Option(c.comment()).fold(f)(f.withComment)
        val protos = SchemaProtos.toProto(SparkToLance.fields(StructType(Seq(sf)), version))
        val fields = if (path.size == 1) edits.add(protos, next)
        else edits.addUnder(path.init, protos, next)
        (new SchemaEdits(s.root, fields), next + protos.size)
    }
    Merge(s.fragments, edits.fields)
  }

  private def reshape(s: Snapshot, table: String, group: Seq[TableChange]): Operation = {
    val fields = group.foldLeft(SchemaEdits(s)) { (edits, c) =>
      val next = c match {
        case d: DeleteColumn =>
          val path = d.fieldNames().toSeq
          if (edits.find(path).isEmpty && d.ifExists()) None
          else Some(edits.drop(Seq(path)))
        case r: RenameColumn => Some(edits.rename(r.fieldNames().toSeq, r.newName()))
        case n: UpdateColumnNullability =>
          Some(edits.setNullable(n.fieldNames().toSeq, n.nullable()))
      }
      next.fold(edits)(f => new SchemaEdits(s.root, f))
    }
    Project(fields.fields)
  }
}
