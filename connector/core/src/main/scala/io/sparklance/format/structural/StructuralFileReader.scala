package io.sparklance.format.structural

import io.sparklance.{LanceErrors, LanceException}
import io.sparklance.format._
import io.sparklance.format.blob.BlobColumn

import io.sparklance.proto.EncodingsV21Protos.{PageLayout, RepDefLayer}
import scala.jdk.CollectionConverters._

/**
 * Reads files of versions 2.1 and 2.2, whose columns use structural page layouts.
 *
 * Only leaf fields (and packed structs) have columns; structs, lists, maps and fixed-size
 * lists of structs exist only in the rep/def levels their leaves carry. A scan therefore opens one [[LeafColumnReader]] per
 * requested leaf present in the file, reads the same rows from each, rebuilds every layer's
 * validity and offsets from the levels ([[RepDefUnraveler]]) and assembles the requested
 * (possibly pruned) field trees, taking each struct's or list's shape from its first present
 * leaf. Requested fields with no column in the file decode as nulls.
 */
object StructuralFileReader {

  /** Rows `[startRow, endRow)` of `fields`; see [[io.sparklance.format.LanceFileReader.scan]]. */
  def scan(
      container: FileContainer,
      fields: Seq[LanceField],
      fileFields: FileFields,
      minor: Int,
      startRow: Long,
      endRow: Long
  ): FileScan = {
    if (minor != 1 && minor != 2)
      throw LanceErrors.unsupported(
        s"Lance file version 2.$minor is not supported by the structural reader (${container.path})"
      )
    if (startRow < 0 || endRow < startRow || endRow > container.numRows)
      throw new IllegalArgumentException(
        s"row range [$startRow, $endRow) outside the ${container.numRows} rows of ${container.path}"
      )
    val columns = columnMap(fileFields, container)
    val fileSchema = fileSchemaById(container)
    val planner = new Planner(container, columns, fileSchema, minor, startRow, endRow)
    val plans = fields.map(f => planner.plan(f, Vector.empty))
    new StructuralScan(container.path, plans.toArray, planner.leaves.toArray)
  }

  /**
   * The leaf (or packed struct, or blob) columns of the field trees. Pages of leaves under
   * lists count top-level rows too (a row's items never straddle pages); leaves under a
   * fixed-size list of structs count its items, so they are left out.
   */
  def pageSpans(
      container: FileContainer,
      fields: Seq[LanceField],
      fileFields: FileFields
  ): Seq[ColumnPageSpans] = {
    val columns = columnMap(fileFields, container)
    val out = Seq.newBuilder[ColumnPageSpans]
    def walk(f: LanceField): Unit = columns.get(f.id) match {
      case Some(col) => out += container.pageSpans(col)
      case None =>
        f.logicalType match {
          case _: LogicalType.FixedSizeList =>
          case _ => f.children.foreach(walk)
        }
    }
    fields.foreach(walk)
    out.result()
  }

  /**
   * Those of top-level `fields` that are leaves whose every page is laid out as all valid
   * (each of its layers ALL_VALID_ITEM): they hold no null. Leaves out anything else: nested
   * fields, blob pages, a nullable layer (which may still hold no null), columns not in the
   * file.
   */
  def provenNullFree(
      container: FileContainer,
      fields: Seq[LanceField],
      fileFields: FileFields
  ): Seq[LanceField] = {
    val columns = columnMap(fileFields, container)
    fields.filter { field =>
      field.children.isEmpty && columns.get(field.id).exists { col =>
        val meta = container.column(col)
        (0 until meta.getPagesCount).forall { p =>
          val page = meta.getPages(p)
          page.getLength == 0 || {
            val ref = new PageRef(container.path, col, field.name, field.id, p)
            val l = PageDecoders.layout(page, ref)
            val layers = l.getLayoutCase match {
              case PageLayout.LayoutCase.MINI_BLOCK_LAYOUT => l.getMiniBlockLayout.getLayersList
              case PageLayout.LayoutCase.FULL_ZIP_LAYOUT => l.getFullZipLayout.getLayersList
              case PageLayout.LayoutCase.CONSTANT_LAYOUT => l.getConstantLayout.getLayersList
              case _ => null
            }
            layers != null && !layers.isEmpty &&
            layers.asScala.forall(_ == RepDefLayer.REPDEF_ALL_VALID_ITEM)
          }
        }
      }
    }
  }

  /** Field id -> column index, from DataFile.fields / column_indices (-2 tombstones, -1 packed children skipped). */
  private def columnMap(ff: FileFields, c: FileContainer): Map[Int, Int] = {
    val out = scala.collection.mutable.HashMap[Int, Int]()
    var i = 0
    while (i < ff.fieldIds.length) {
      val id = ff.fieldIds(i)
      val col = if (ff.columnIndices.isEmpty) i
      else if (i < ff.columnIndices.length) ff.columnIndices(i)
      else -1
      if (id >= 0 && col >= 0) {
        if (col >= c.numColumns) throw LanceErrors.corruptFile(
          c.path,
          s"field $id maps to column $col but the file has ${c.numColumns} columns"
        )
        out(id) = col
      }
      i += 1
    }
    out.toMap
  }

  private def fileSchemaById(c: FileContainer): Map[Int, LanceField] =
    try LanceSchema.fromProto(
        c.descriptor.getSchema.getFieldsList.asScala.toSeq,
        Map.empty,
        c.path
      ).byId
    catch { case _: LanceException => Map.empty }
}

/** One node of a requested field tree, bound to the file. */
private[structural] sealed abstract class Plan { def field: LanceField; def firstLeaf: LeafPlan }
private[structural] final class LeafPlan(
    val field: LanceField,
    val reader: LeafColumnReader,
    val select: Array[Int]
) extends Plan {
  def firstLeaf: LeafPlan = this
  var unraveled: Unraveled = null
}
private[structural] final class MissingPlan(val field: LanceField) extends Plan {
  def firstLeaf: LeafPlan = null
}
private[structural] final class StructPlan(val field: LanceField, val children: Array[Plan])
    extends Plan {
  val firstLeaf: LeafPlan = children.iterator.map(_.firstLeaf).find(_ != null).orNull
}
private[structural] final class ListPlan(val field: LanceField, val child: Plan) extends Plan {
  val firstLeaf: LeafPlan = child.firstLeaf
}

/** A fixed-size list of structs: no column of its own, a layer of its leaves' levels. */
private[structural] final class FslPlan(val field: LanceField, val dim: Int, val child: Plan)
    extends Plan {
  val firstLeaf: LeafPlan = child.firstLeaf
}

private[structural] final class Planner(
    container: FileContainer,
    columns: Map[Int, Int],
    fileSchema: Map[Int, LanceField],
    minor: Int,
    startRow: Long,
    endRow: Long
) {
  val leaves = scala.collection.mutable.ArrayBuffer[LeafPlan]()

  /**
   * The layers of a leaf whose path (types, outermost first) is `here`; the leaf itself is
   * layer 0, an item even when its type is a fixed-size list (of primitives: its values).
   */
  private def layersOf(here: Vector[LogicalType], f: LanceField): Layers = {
    val inner = here.reverse
    val isList = inner.map(_.isRepeated).toArray.updated(0, false)
    // (plan() refuses a fixed-size list ancestor of dimension 0 before getting here)
    val dims = inner.zipWithIndex.map {
      case (LogicalType.FixedSizeList(_, d), j) if j > 0 => d
      case _ => 0
    }.toArray
    val outermostFsl = dims.lastIndexWhere(_ > 0)
    if (outermostFsl >= 0 && isList.drop(outermostFsl).contains(true))
      throw LanceErrors.unsupported(
        s"Column '${f.name}' (id ${f.id}) of ${container.path} lies in a fixed-size list of " +
          "structs inside a list, which pylance 14.0.2 cannot write"
      )
    new Layers(isList, dims)
  }

  /** `path` holds the types of the ancestors, outermost first. */
  def plan(f: LanceField, path: Vector[LogicalType]): Plan = {
    val here = path :+ f.logicalType
    columns.get(f.id) match {
      case Some(col) =>
        val layers = layersOf(here, f)
        val blobVersion = BlobColumn.version(f)
        val (builder, select) =
          if (blobVersion.isDefined) {
            // A blob column decodes to its descriptor struct, whatever children the field lists.
            (BlobBuilders.descriptors(blobVersion.get), null)
          } else if (f.children.nonEmpty && f.logicalType == LogicalType.Struct) {
            // A packed struct: decode every field the file has, hand out the requested ones.
            val full = fileSchema.getOrElse(f.id, f)
            val b = new StructBuilder(full.children.map(c =>
              ValuesBuilder.forType(c.logicalType, c.name)
            ).toArray)
            (b, f.children.map(c => full.children.indexWhere(_.id == c.id)).toArray)
          } else if (f.children.nonEmpty) {
            throw LanceErrors.unsupported(
              s"Column '${f.name}' (id ${f.id}) of ${container.path} is a " +
                s"${f.logicalType.text} stored as one column"
            )
          } else (ValuesBuilder.forType(f.logicalType, f.name, keepDictionary = path.isEmpty), null)
        val batch = new LeafBatch(layers, builder)
        val reader =
          try new LeafColumnReader(
              container,
              col,
              f.name,
              f.id,
              layers,
              batch,
              f.logicalType == LogicalType.Bool,
              minor,
              startRow,
              endRow
            )
          catch {
            case e: LanceException => throw e
            case e: RuntimeException =>
              throw LanceErrors.corruptFile(
                container.path,
                s"column $col (field '${f.name}', id ${f.id}) metadata is invalid: $e",
                e
              )
          }
        val lp = new LeafPlan(f, reader, select)
        leaves += lp
        lp
      case None =>
        if (f.children.isEmpty) new MissingPlan(f)
        else if (f.logicalType.isRepeated) {
          val child = plan(f.children.head, here)
          if (child.firstLeaf == null) new MissingPlan(f) else new ListPlan(f, child)
        } else if (f.logicalType == LogicalType.Struct) {
          val sp = new StructPlan(f, f.children.map(c => plan(c, here)).toArray)
          if (sp.firstLeaf == null) new MissingPlan(f) else sp
        } else f.logicalType match {
          case LogicalType.FixedSizeList(_, dim) if f.children.size == 1 =>
            if (dim <= 0) throw LanceErrors.corruptFile(
              container.path,
              s"field '${f.name}' (id ${f.id}) is a fixed-size list of dimension $dim"
            )
            val child = plan(f.children.head, here)
            if (child.firstLeaf == null) new MissingPlan(f) else new FslPlan(f, dim, child)
          case _ => throw LanceErrors.unsupported(
              s"Column '${f.name}' of type ${f.logicalType.text} with child fields is not supported"
            )
        }
    }
  }
}

private[structural] final class StructuralScan(
    path: String,
    plans: Array[Plan],
    leaves: Array[LeafPlan]
) extends FileScan {
  def next(n: Int): Array[ColumnArray] = read(n, shared = false)

  override def nextShared(n: Int): Array[ColumnArray] = read(n, shared = true)

  private def read(n: Int, shared: Boolean): Array[ColumnArray] = {
    var i = 0
    while (i < leaves.length) {
      val l = leaves(i)
      l.reader.batch.reset()
      l.reader.read(n)
      l.unraveled =
        try RepDefUnraveler.unravel(l.reader.batch, s"field '${l.field.name}' (id ${l.field.id})")
        catch {
          case e: IllegalStateException => throw LanceErrors.corruptFile(path, e.getMessage, e)
        }
      i += 1
    }
    plans.map(p => build(p, 0, n, shared))
  }

  /** Each leaf skips on its own; nothing is assembled. */
  override def skip(n: Int): Unit = {
    var i = 0
    while (i < leaves.length) { leaves(i).reader.skip(n); i += 1 }
  }

  private def corrupt(f: LanceField, why: String) =
    LanceErrors.corruptFile(path, s"field '${f.name}' (id ${f.id}): $why")

  private def build(p: Plan, depth: Int, expected: Int, shared: Boolean): ColumnArray = p match {
    case m: MissingPlan => new NullArray(expected)
    case l: LeafPlan =>
      val u = l.unraveled; val layers = l.reader.layers
      if (layers.numLayers - 1 != depth)
        throw corrupt(l.field, s"leaf at depth $depth has ${layers.numLayers} layers")
      if (u.count(0) != expected)
        throw corrupt(l.field, s"leaf has ${u.count(0)} slots, expected $expected")
      val b = l.reader.batch.values
      if (b.size != expected)
        throw corrupt(l.field, s"decoded ${b.size} values for $expected slots")
      val arr = b.result(u.nulls(0), shared)
      if (l.select == null) arr
      else {
        val s = arr.asInstanceOf[StructArray]
        new StructArray(
          s.length,
          s.nulls,
          l.select.map(k => if (k < 0) new NullArray(s.length) else s.children(k))
        )
      }
    case s: StructPlan =>
      val (u, j) = shape(s.firstLeaf, depth, s.field)
      if (u.count(j) != expected)
        throw corrupt(s.field, s"struct has ${u.count(j)} slots, expected $expected")
      new StructArray(
        expected,
        u.nulls(j),
        s.children.map(c => build(c, depth + 1, expected, shared))
      )
    case l: ListPlan =>
      val (u, j) = shape(l.firstLeaf, depth, l.field)
      if (u.count(j) != expected)
        throw corrupt(l.field, s"list has ${u.count(j)} slots, expected $expected")
      new ListArray(
        expected,
        u.nulls(j),
        u.offsets(j),
        build(l.child, depth + 1, u.count(j - 1), shared)
      )
    case f: FslPlan =>
      val (u, j) = shape(f.firstLeaf, depth, f.field)
      if (u.count(j) != expected)
        throw corrupt(f.field, s"fixed-size list has ${u.count(j)} slots, expected $expected")
      val items = expected.toLong * f.dim
      if (items > Int.MaxValue - 16)
        throw corrupt(f.field, s"$items fixed-size list items in one batch")
      new FixedSizeListArray(
        expected,
        u.nulls(j),
        f.dim,
        build(f.child, depth + 1, items.toInt, shared)
      )
  }

  private def shape(leaf: LeafPlan, depth: Int, f: LanceField): (Unraveled, Int) = {
    val j = leaf.reader.layers.numLayers - 1 - depth
    if (j < 0) throw corrupt(f, "field deeper than its leaf")
    (leaf.unraveled, j)
  }

  def close(): Unit = ()
}
