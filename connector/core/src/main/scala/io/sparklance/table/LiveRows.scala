package io.sparklance.table

import org.roaringbitmap.RoaringBitmap

import io.sparklance.storage.FileIO

/**
 * The rows of one table version a search may return, by row address (fragment id << 32 |
 * offset): those of fragments still in the table and not deleted. An index keeps the rows of
 * the fragments it was built on: pylance drops the deleted ones and those of fragments since
 * removed or rewritten from its results (its prefilter), so a search keeps `k` live rows
 * (and MIN and MAX from a BTREE index, see IndexAggregates, only live values).
 * Deletion files are read on first use, one per fragment. With a filter (pylance's
 * `prefilter=True`), only the `allowed` rows: fragment id -> offsets of the rows that match.
 */
final class LiveRows(
    val io: FileIO,
    val fragments: Map[Long, FragmentRef],
    val allowed: Option[Map[Long, RoaringBitmap]] = None
) extends Serializable {
  @transient private lazy val deletions =
    scala.collection.mutable.HashMap.empty[Long, DeletionVector]

  def contains(address: Long): Boolean = {
    val frag = address >>> 32
    val offset = address & 0xffffffffL
    if (allowed.exists(a => !a.get(frag).exists(_.contains(offset.toInt)))) return false
    fragments.get(frag) match {
      case None => false
      case Some(f) =>
        if (f.physicalRowsTrusted && offset >= f.physicalRows) false
        else if (f.deletionPath.isEmpty) true
        else !deletions.getOrElseUpdate(frag, DeletionVector.read(io, f)).contains(offset.toInt)
    }
  }
}

object LiveRows {
  def apply(io: FileIO, s: Snapshot, allowed: Option[Map[Long, RoaringBitmap]]): LiveRows =
    new LiveRows(io, s.fragments.map(f => f.getId -> FragmentRef(s.root, s, f)).toMap, allowed)

  /** The allow-list of the row addresses `rows`, by fragment. */
  def allowList(rows: Iterator[Long]): Map[Long, RoaringBitmap] = {
    val out = scala.collection.mutable.HashMap.empty[Long, RoaringBitmap]
    rows.foreach(a => out.getOrElseUpdate(a >>> 32, new RoaringBitmap()).add(a.toInt))
    out.toMap
  }

  /** Two allow-lists as one. */
  def union(a: Map[Long, RoaringBitmap], b: Map[Long, RoaringBitmap]): Map[Long, RoaringBitmap] =
    unionBy(a, b)((x, y) => RoaringBitmap.or(x, y))

  /** Two maps by fragment id as one: a fragment in both gets `both` of its two values. */
  def unionBy[V](a: Map[Long, V], b: Map[Long, V])(both: (V, V) => V): Map[Long, V] =
    (a.keySet ++ b.keySet).iterator.map { k =>
      k -> ((a.get(k), b.get(k)) match {
        case (Some(x), Some(y)) => both(x, y)
        case (x, y) => x.orElse(y).get
      })
    }.toMap
}
