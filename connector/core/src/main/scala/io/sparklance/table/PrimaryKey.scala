package io.sparklance.table

import io.sparklance.LanceErrors
import io.sparklance.format.{LanceField, LanceSchema, LogicalType}
import io.sparklance.format.writer.SchemaProtos
import io.sparklance.table.txn.{UpdateConfig, UpdateMap}

/**
 * A table's unenforced primary key (pylance 14): leaf fields whose metadata says
 * `lance-schema:unenforced-primary-key: true` (and, for a key of several fields, their
 * `...:position`). Lance does not check that keys are unique; a merge keyed on them records
 * the keys it inserts, so that concurrent merges inserting the same key conflict instead of
 * both inserting it. Set once, never changed; its fields are non-null leaf fields of the
 * types Lance hashes: 32/64-bit integers, strings and binaries.
 */
object PrimaryKey {
  val Marker = SchemaProtos.PrimaryKey
  val Position = SchemaProtos.PrimaryKeyPosition

  val KeyTypes: Set[LogicalType] = {
    import LogicalType._
    Set(Int32, Int64, UInt32, UInt64, Utf8, LargeUtf8, Binary, LargeBinary)
  }

  def isKey(f: LanceField): Boolean =
    f.metadataString(Marker).exists(_.trim.equalsIgnoreCase("true")) ||
      f.metadata.contains(Position)

  private def position(f: LanceField): Int =
    f.metadataString(Position).flatMap(p => scala.util.Try(p.trim.toInt).toOption).getOrElse(0)

  /**
   * The key's fields in key order, as pylance orders them: by position (1-based; 0 means
   * none), fields without one after, in schema order; empty without a key.
   */
  def of(schema: LanceSchema): Seq[LanceField] =
    schema.fields.flatMap(_.preOrder).zipWithIndex.filter(x => isKey(x._1))
      .sortBy { case (f, i) => if (position(f) > 0) (0, position(f), i) else (1, 0, i) }
      .map(_._1)

  /** Dotted paths of the key's fields, in key order. */
  def paths(schema: LanceSchema): Seq[String] =
    of(schema).map(f => schema.pathOf(f.id).getOrElse(Seq(f.name)).mkString("."))

  /** Field metadata marking the `i`-th (from 0) of `n` key fields (positions count from 1). */
  def marker(i: Int, n: Int): Map[String, String] =
    if (n == 1) Map(Marker -> "true") else Map(Marker -> "true", Position -> (i + 1).toString)

  /**
   * Checks that `fields` (in key order) may form the key of the table at `root`: leaf
   * fields, non-null, of a key type, none twice.
   */
  def check(root: String, fields: Seq[(String, LanceField)]): Unit = {
    def refuse(why: String) = throw LanceErrors.invalidSchemaChange(
      root,
      s"cannot make ${fields.map(_._1).mkString(", ")} the primary key: $why"
    )
    if (fields.isEmpty) refuse("no column named")
    fields.groupBy(_._2.id).values.find(_.size > 1).foreach(d => refuse(s"'${d.head._1}' twice"))
    fields.foreach { case (p, f) =>
      if (f.parentId != -1) refuse(s"'$p' is nested; key columns are top-level columns")
      if (!f.isLeaf) refuse(s"'$p' is a ${f.logicalType.text}, not a leaf column")
      if (!KeyTypes(f.logicalType))
        refuse(s"'$p' is ${f.logicalType.text}; Lance keys are 32/64-bit integers, strings " +
          "or binaries")
      if (f.nullable) refuse(s"'$p' is nullable; key columns are declared NOT NULL")
    }
  }

  /**
   * `fields` (a new table's top-level fields) with `columns` marked as the primary key, in
   * that order, and made NOT NULL (a key has a value in every row); checked as [[check]].
   */
  def mark(root: String, fields: Seq[LanceField], columns: Seq[String]): Seq[LanceField] =
    if (columns.isEmpty) fields
    else {
      val keyed = columns.map { c =>
        c -> fields.find(_.name == c).getOrElse(throw LanceErrors.invalidSchemaChange(
          root,
          s"cannot make '$c' the primary key: no such column (columns: " +
            s"${fields.map(_.name).mkString(", ")})"
        )).copy(nullable = false)
      }
      check(root, keyed)
      fields.map { f =>
        val i = columns.indexOf(f.name)
        if (i < 0) f
        else f.copy(
          nullable = false,
          metadata = f.metadata ++ marker(i, columns.size)
            .map { case (k, v) => k -> v.getBytes("UTF-8") }
        )
      }
    }

  /**
   * The UpdateConfig that makes the columns at `paths` the primary key of `s`, as pylance's
   * field metadata update does; refused when the table has a key already (it never changes).
   */
  def install(s: Snapshot, paths: Seq[Seq[String]]): UpdateConfig = {
    val existing = this.paths(s.schema)
    if (existing.nonEmpty)
      throw LanceErrors.invalidSchemaChange(
        s.root,
        s"the primary key is " +
          s"${existing.mkString(", ")} and cannot change"
      )
    def find(path: Seq[String]): Option[LanceField] =
      path.tail.foldLeft(s.schema.fields.find(_.name == path.head)) { (at, name) =>
        at.flatMap(_.children.find(_.name == name))
      }
    val fields = paths.map { p =>
      p.mkString(".") -> find(p).getOrElse(throw LanceErrors.invalidSchemaChange(
        s.root,
        s"cannot make '${p.mkString(".")}' the primary key: no such column"
      ))
    }
    check(s.root, fields)
    UpdateConfig(fieldMetadata = fields.zipWithIndex.map { case ((_, f), i) =>
      f.id -> UpdateMap.set(marker(i, fields.size))
    }.toMap)
  }

  /** Whether `u` sets or removes a key marker (or replaces a field's metadata). */
  def touches(u: UpdateConfig): Boolean =
    u.fieldMetadata.values.exists(m =>
      m.replace || m.entries.exists { case (k, _) =>
        k == Marker || k == Position
      }
    )
}
