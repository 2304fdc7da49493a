package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.format.{FixedWidthArray, LanceField, LogicalType}
import io.sparklance.format.writer.SchemaProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.{SchemaEdits, Snapshot}
import io.sparklance.table.index.ScalarIndexes
import io.sparklance.table.maintenance.Compaction
import io.sparklance.testutil.{Pylance, RowFiles}

/**
 * Our operations on `(id, n, v)` datasets pylance made (`update_ops.py`), built from a
 * snapshot the way the Spark layer will build them: which rows a predicate matches comes
 * from pylance's scan of that very version, so both sides act on the same rows.
 */
object OurOps {

  /** Row offsets per fragment, and the rows themselves, that `pred` matches at `s`. */
  def matched(
      s: Snapshot,
      pred: String
  ): (Map[Long, RoaringBitmap], Seq[com.fasterxml.jackson.databind.JsonNode]) = {
    val hits = Pylance.call("update_ops", "matched", s.root, s.version, pred).elements().asScala
      .toSeq
    val rows = hits.groupBy(_.get("fragment").asLong).map { case (f, hs) =>
      f -> RoaringBitmap.bitmapOf(hs.map(_.get("offset").asInt): _*)
    }
    (rows, hits)
  }

  /** `delete where pred`. */
  def delete(s: Snapshot, pred: String): Operation = Delete(matched(s, pred)._1, pred)

  /**
   * `update n = n + add where pred`: the matched rows are deleted where they are and written
   * again, in scan order, to one new fragment; with stable row ids they keep their ids.
   */
  def update(s: Snapshot, pred: String, add: Long): Operation = {
    val (rows, hits) = matched(s, pred)
    val moved = hits.map { h =>
      // A null (a column added without values) is left out: the new file holds it as null.
      val values = h.get("values").fields().asScala.filterNot(_.getValue.isNull).map { e =>
        e.getKey -> (if (e.getValue.isTextual) e.getValue.asText else e.getValue.asLong)
      }.toMap[String, Any]
      values.updated("n", values("n").asInstanceOf[Long] + add)
    }
    val stable = (s.readerFeatureFlags & 2L) != 0
    val kept = if (stable) hits.map(_.get("rowid").asLong).toArray else Array.emptyLongArray
    val n = s.schema.fields.find(_.name == "n").get.id
    val written = if (moved.isEmpty) Nil else Seq(NewRows(RowFiles.fragment(s, moved), kept))
    Update(rows, written, Seq(n))
  }

  /**
   * `update n = n + add where pred` as a column rewrite (pylance's `update_columns`): every
   * fragment with a matched row gets a new file of n for all its physical rows.
   */
  def updateColumns(s: Snapshot, pred: String, add: Long): Operation = {
    val (rows, hits) = matched(s, pred)
    val n = s.schema.fields.find(_.name == "n").get
    val all = Pylance.call("update_ops", "column_values", s.root, s.version, "n")
    val files = rows.keys.map { f =>
      val values = all.get(f.toString).elements().asScala.map(_.asLong).toArray
      hits.filter(_.get("fragment").asLong == f).foreach { h =>
        val o = h.get("offset").asInt
        values(o) += add
      }
      f -> RowFiles.column(s, n, values.toSeq).toProto
    }.toMap
    ColumnUpdate(files, rows, Seq(n.id))
  }

  /** `count` new rows from id `start`, all with n = `n`. */
  def append(s: Snapshot, start: Long, count: Int, n: Long): Operation =
    Append(Seq(RowFiles.fragment(s, rows(start, count, n))))

  /** The dataset replaced by `count` rows from id `start`, same schema. */
  def overwrite(s: Snapshot, start: Long, count: Int): Operation =
    Overwrite(
      Seq(RowFiles.fragment(s, rows(start, count, 0))),
      s.schema.fields,
      Map.empty,
      None,
      mustCreate = false
    )

  /** A new all-null int32 column `name` (pylance's `add_columns(pa.field(name, pa.int32()))`). */
  def addNullColumn(s: Snapshot, name: String): Operation =
    Merge.addNullColumns(
      s,
      SchemaProtos.toProto(Seq(
        LanceField(0, -1, name, LogicalType.Int32, nullable = true, Map.empty, Nil)
      ))
    )

  /** Fragment 0's 20 rows again with n = `n`, in one new file: a DataReplacement. */
  def replaceFragment0(s: Snapshot, n: Long): Operation =
    DataReplacement(Seq(0L -> RowFiles.fragment(s, rows(0, 20, n)).file.toProto))

  /**
   * A new int64 column `w` = id * 2, one data file per fragment (pylance's
   * `add_columns({"w": "id * 2"})`): a Merge that rewrites every row's column. Fragment f
   * of the matrix's datasets holds ids 20 f until 20 f + 20.
   */
  def addColumnW(s: Snapshot): Operation = {
    val fields = SchemaEdits(s).add(
      SchemaProtos.toProto(Seq(
        LanceField(0, -1, "w", LogicalType.Int64, nullable = true, Map.empty, Nil)
      )),
      SchemaEdits.firstFreeId(s.manifest)
    )
    val w = fields.find(_.getName == "w").get.getId
    val frags = s.fragments.map { f =>
      val ids = (0L until f.getPhysicalRows).map(i => 20 * f.getId + i)
      val file = RowFiles.column(
        s,
        LanceField(w, -1, "w", LogicalType.Int64, nullable = true, Map.empty, Nil),
        ids.map(_ * 2)
      )
      f.toBuilder.addFiles(file.toProto).build()
    }
    Merge(frags, fields, rewritesRows = true)
  }

  /** A BTREE index of id, fed the rows pylance reads at `read` (pylance's default name). */
  def createIdIndex(fileIO: FileIO, read: Snapshot): Unit = {
    ScalarIndexes.createBTree(fileIO, read, "id", None, replace = true) { w =>
      val rows = Pylance.call("table_ops", "btree_rows", read.root, "id", Long.box(read.version))
      val ids = rows.get("ids").elements().asScala.map(_.asLong()).toArray
      val b = java.nio.ByteBuffer.allocate(ids.length * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      rows.get("values").elements().asScala.foreach(v => b.putLong(v.asLong()))
      w.add(new FixedWidthArray(ids.length, null, 8, b.array()), ids)
    }
  }

  /** Compaction with default options read at `read`: ReserveFragments, then a Rewrite. */
  def compact(fileIO: FileIO, read: Snapshot): Unit =
    Compaction(fileIO, read.root, read = Some(read))

  private def rows(start: Long, count: Int, n: Long): Seq[RowFiles.Row] =
    (start until start + count).map(i => RowFiles.row(i, n))
}
