package io.sparklance.table.index

import io.sparklance.format._
import io.sparklance.proto.TableProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.{DatasetLayout, LiveRows, ManifestFile, Snapshot}
import io.sparklance.table.txn.Rewrite

/**
 * MIN and MAX of a column answered from its BTREE index (see [[BTreeIndexWriter]]), exactly:
 * the index holds every row of the fragments it covers sorted by value (nulls first), so the
 * first (or last) non-null value whose row is still live is the answer. Only when the index
 * covers every fragment of the version — a fragment it does not cover (appended since, or
 * changed in place) could hold a smaller or larger value — and the column is of an integer,
 * date, microsecond timestamp or string type, whose order the index shares with Spark.
 */
object IndexAggregates {

  /**
   * The least (or, with `max`, the greatest) live non-null value of the top-level `column` as
   * a one-row array (None inside when there is none: the aggregate is null), or None when no
   * index answers it.
   */
  def extreme(
      io: FileIO,
      s: Snapshot,
      column: String,
      max: Boolean
  ): Option[Option[ColumnArray]] = {
    val field = s.schema.field(column).filter(f => f.children.isEmpty && Ordered(f.logicalType))
    field.flatMap { f =>
      val present = s.fragments.map(_.getId)
      ManifestFile.indices(io, s).find { i =>
        BTreeIndexRemap.remappable(i) && i.getFields(0) == f.id && {
          val covered = Rewrite.bitmap(i)
          present.forall(id => covered.contains(id.toInt))
        }
      }.map(i => search(io, s, i, max))
    }
  }

  private val Ordered: LogicalType => Boolean = {
    import LogicalType._
    {
      case Int8 | Int16 | Int32 | Int64 | Date32 | Utf8 | LargeUtf8 => true
      case Timestamp(TimeUnit.Micro, _) => true
      case _ => false
    }
  }

  private def search(
      io: FileIO,
      s: Snapshot,
      i: TableProtos.IndexMetadata,
      max: Boolean
  ): Option[ColumnArray] = {
    val dir = DatasetLayout.indexDir(s.root, ManifestFile.uuidText(i.getUuid))
    val live = LiveRows(io, s, None)
    val data = BTreePageData.open(io, dir, ScalarIndexes.fileSize(i, BTreeIndexWriter.DataFile))
    try {
      val rows = data.numRows
      val batch = 4096L
      val starts = (0L until rows by batch).toIndexedSeq
      (if (max) starts.reverse else starts).iterator.map { start =>
        val n = math.min(batch, rows - start).toInt
        val (values, ids) = data.rows(start, start + n)
        val order = if (max) (n - 1 to 0 by -1) else (0 until n)
        order.find(r => !values.isNull(r) && live.contains(ids.getLong(r * 8)))
          .map(r => ColumnArrays.slice(values, r, 1))
      }.collectFirst { case Some(v) => v }
    } finally data.close()
  }
}
