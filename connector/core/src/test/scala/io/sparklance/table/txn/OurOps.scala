package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.table.Snapshot
import io.sparklance.testutil.{Pylance, RowFiles}

/**
 * Our operations on `(id, n, v)` datasets pylance made (`update_ops.py`), built from a
 * snapshot the way the Spark layer will build them: which rows a predicate matches comes
 * from pylance's scan of that very version, so both sides act on the same rows.
 */
object OurOps {
  /** Row offsets per fragment, and the rows themselves, that `pred` matches at `s`. */
  def matched(s: Snapshot, pred: String)
      : (Map[Long, RoaringBitmap], Seq[com.fasterxml.jackson.databind.JsonNode]) = {
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
      val values = h.get("values").fields().asScala.map { e =>
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

  /** `count` new rows from id `start`, all with n = `n`. */
  def append(s: Snapshot, start: Long, count: Int, n: Long): Operation =
    Append(Seq(RowFiles.fragment(s, rows(start, count, n))))

  /** The dataset replaced by `count` rows from id `start`, same schema. */
  def overwrite(s: Snapshot, start: Long, count: Int): Operation =
    Overwrite(Seq(RowFiles.fragment(s, rows(start, count, 0))), s.schema.fields, Map.empty,
      None, mustCreate = false)

  /** A new all-null int32 column `name` (pylance's `add_columns(pa.field(name, pa.int32()))`). */
  def addNullColumn(s: Snapshot, name: String): Operation =
    Merge.addNullColumns(s, io.sparklance.format.writer.SchemaProtos.toProto(Seq(
      io.sparklance.format.LanceField(0, -1, name, io.sparklance.format.LogicalType.Int32,
        nullable = true, Map.empty, Nil))))

  private def rows(start: Long, count: Int, n: Long): Seq[RowFiles.Row] =
    (start until start + count).map(i => RowFiles.row(i, n))
}
