package io.sparklance.table

import org.roaringbitmap.RoaringBitmap

import io.sparklance.storage.FileIO

/**
 * The rows `offset` until `offset + limit` of a table in its order: fragment after fragment,
 * each in row order, deleted rows not counted (pylance's `to_table(offset=, limit=)`).
 *
 * The window is found from the manifest's row counts: the fragments wholly inside it are kept
 * as they are, and the one or two it cuts are narrowed to the physical rows holding their share
 * (row candidates, which the reader honours exactly). Only a cut fragment with deletions has
 * its deletion file read, to find where its k-th live row sits.
 */
object RowWindow {

  /** The fragments holding the window, in order; `limit` None: every row from `offset` on. */
  def of(
      io: FileIO,
      fragments: Iterable[FragmentRef],
      offset: Long,
      limit: Option[Long]
  ): Seq[FragmentRef] = {
    require(offset >= 0 && limit.forall(_ >= 0), s"offset $offset, limit $limit")
    val end = limit.fold(Long.MaxValue)(l =>
      if (l > Long.MaxValue - offset) Long.MaxValue
      else offset + l
    )
    val out = Seq.newBuilder[FragmentRef]
    var before = 0L // live rows of the fragments before the current one
    val it = fragments.iterator
    while (it.hasNext && before < end) {
      val f = it.next()
      val live = RowCounts.liveRows(io, f)
      val from = math.max(0L, offset - before)
      val until = math.min(live, end - before)
      if (from < until) {
        out += (if (from == 0 && until == live) f
                else f.copy(rowCandidates = Some(physicalRange(io, f, from, until))))
      }
      before += live
    }
    out.result()
  }

  /** The physical rows of `f` holding its live rows `from` until `until`. */
  private def physicalRange(io: FileIO, f: FragmentRef, from: Long, until: Long): RoaringBitmap = {
    val rows = RowCounts.physicalRows(io, f)
    val range = new RoaringBitmap()
    if (f.deletionPath.isEmpty) range.add(from, until)
    else {
      val deleted = DeletionVector.read(io, f).deleted
      range.add(physicalOf(deleted, from, rows), physicalOf(deleted, until, rows))
    }
    range
  }

  /**
   * Where the `k`-th live row (from 0) of a fragment of `rows` physical rows sits, `rows` when
   * it has no more than `k` live rows: the first position `p` with `k + 1` live rows in
   * `[0, p]`.
   */
  private[table] def physicalOf(deleted: RoaringBitmap, k: Long, rows: Long): Long = {
    var lo = 0L
    var hi = rows // the answer lies in [lo, hi]
    while (lo < hi) {
      val mid = lo + (hi - lo) / 2
      val liveUpTo = mid + 1 - deleted.rankLong(mid.toInt)
      if (liveUpTo >= k + 1) hi = mid else lo = mid + 1
    }
    lo
  }
}
