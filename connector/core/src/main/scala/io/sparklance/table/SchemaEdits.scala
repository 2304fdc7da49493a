package io.sparklance.table

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.proto.{FileProtos, TableProtos}

/**
 * Schema changes on a manifest's flat, pre-order field list, as pylance's `drop_columns`,
 * `alter_columns` and `add_columns` make them: fields keep their ids and everything else they
 * carry (encodings, metadata, keys); a column is named by its path from the top (`Seq("s",
 * "a")` for a struct's child). Every change is checked first and refused with the column
 * named when pylance would refuse it or a reader could no longer read the table.
 */
final class SchemaEdits(root: String, val fields: Seq[FileProtos.Field]) {
  private def fail(why: String) = LanceErrors.invalidSchemaChange(root, why)

  private def children(parent: Int): Seq[FileProtos.Field] = fields.filter(_.getParentId == parent)

  /** The field at `path` (names compared exactly, as pylance does), or None. */
  def find(path: Seq[String]): Option[FileProtos.Field] = {
    require(path.nonEmpty)
    path.foldLeft(Option(-1) -> Option.empty[FileProtos.Field]) {
      case ((Some(parent), _), name) =>
        children(parent).find(_.getName == name) match {
          case Some(f) => (Some(f.getId), Some(f))
          case None => (None, None)
        }
      case (acc, _) => acc
    }._2
  }

  private def get(path: Seq[String]): FileProtos.Field = find(path).getOrElse(
    throw fail(s"column '${path.mkString(".")}' does not exist; the columns are " +
      fields.filter(_.getParentId == -1).map(_.getName).mkString(", "))
  )

  /** The ids of the field and all its descendants. */
  private def subtree(id: Int): Set[Int] =
    Set(id) ++ children(id).flatMap(c => subtree(c.getId))

  /** Without the columns at `paths` and their children. */
  def drop(paths: Seq[Seq[String]]): Seq[FileProtos.Field] = {
    val gone = paths.flatMap(p => subtree(get(p).getId)).toSet
    val left = fields.filterNot(f => gone(f.getId))
    if (!left.exists(_.getParentId == -1))
      throw fail("cannot drop every column of a table")
    // A struct left without children cannot be read or written.
    left.filter(f => f.getParentId == -1 || !gone(f.getParentId))
      .find(f => children(f.getId).nonEmpty && !left.exists(_.getParentId == f.getId))
      .foreach(f => throw fail(s"cannot drop every field of struct column '${f.getName}'"))
    left
  }

  /** With the column at `path` named `name`. */
  def rename(path: Seq[String], name: String): Seq[FileProtos.Field] = {
    val f = get(path)
    if (name.isEmpty || name.contains('.'))
      throw fail(s"cannot rename '${path.mkString(".")}' to '$name': a column name must not " +
        "be empty or contain '.'")
    if (children(f.getParentId).exists(s => s.getName == name && s.getId != f.getId))
      throw fail(s"cannot rename '${path.mkString(".")}' to '$name': a column of that name " +
        "exists")
    fields.map(x => if (x.getId == f.getId) x.toBuilder.setName(name).build() else x)
  }

  /** With the column at `path` nullable (making one non-nullable is refused: it needs a scan). */
  def setNullable(path: Seq[String], nullable: Boolean): Seq[FileProtos.Field] = {
    val f = get(path)
    if (!nullable && f.getNullable)
      throw fail(s"cannot make column '${path.mkString(".")}' non-nullable: existing rows " +
        "are not checked for nulls")
    if (!nullable) fields
    else fields.map(x => if (x.getId == f.getId) x.toBuilder.setNullable(true).build() else x)
  }

  /**
   * With top-level columns appended: `added` are their fields with ids from 0 in pre-order,
   * re-numbered from the first id never used in this table (`firstFreeId`).
   */
  def add(added: Seq[FileProtos.Field], firstFreeId: Int): Seq[FileProtos.Field] = {
    added.filter(_.getParentId == -1).foreach { f =>
      if (children(-1).exists(_.getName == f.getName))
        throw fail(s"cannot add column '${f.getName}': a column of that name exists")
    }
    val shift = firstFreeId
    fields ++ added.map { f =>
      val b = f.toBuilder.setId(f.getId + shift)
      if (f.getParentId >= 0) b.setParentId(f.getParentId + shift)
      b.build()
    }
  }

  /**
   * With fields appended to the struct at `parent` (pylance's `add_columns` with the struct
   * given again with its new children): `added` are the new children with ids from 0 in
   * pre-order (top ones with parent -1), re-numbered from `firstFreeId`, placed after the
   * struct's last descendant so the list stays in pre-order.
   */
  def addUnder(
      parent: Seq[String],
      added: Seq[FileProtos.Field],
      firstFreeId: Int
  ): Seq[FileProtos.Field] = {
    val p = get(parent)
    val where = parent.mkString(".")
    if (p.getLogicalType != "struct")
      throw fail(s"cannot add a field under '$where': it is a ${p.getLogicalType}, not a struct")
    added.filter(_.getParentId == -1).foreach { f =>
      if (children(p.getId).exists(_.getName == f.getName))
        throw fail(s"cannot add field '$where.${f.getName}': a field of that name exists")
    }
    val shifted = added.map { f =>
      f.toBuilder.setId(f.getId + firstFreeId)
        .setParentId(if (f.getParentId >= 0) f.getParentId + firstFreeId else p.getId).build()
    }
    val inside = subtree(p.getId)
    val last = fields.lastIndexWhere(f => inside(f.getId))
    fields.take(last + 1) ++ shifted ++ fields.drop(last + 1)
  }
}

object SchemaEdits {
  def apply(s: Snapshot): SchemaEdits =
    new SchemaEdits(s.root, s.manifest.getFieldsList.asScala.toSeq)

  /**
   * The first field id a new column may take: past every id in the schema, in any data file
   * and `max_allocated_field_id` (observed: pylance 14 numbers a column added after a drop
   * past the dropped column's id, which data files still list).
   */
  def firstFreeId(m: TableProtos.Manifest): Int = {
    val inSchema = m.getFieldsList.asScala.map(_.getId)
    val inFiles = m.getFragmentsList.asScala.flatMap(_.getFilesList.asScala)
      .flatMap(_.getFieldsList.asScala.map(_.intValue))
    val allocated = if (m.hasMaxAllocatedFieldId) Seq(m.getMaxAllocatedFieldId) else Nil
    ((inSchema ++ inFiles ++ allocated) :+ -1).max + 1
  }
}
