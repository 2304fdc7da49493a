package io.sparklance.table.maintenance

import scala.collection.mutable

import io.sparklance.proto.TableProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.{FeatureFlags, FragmentRef, RowCounts, Snapshot}
import io.sparklance.table.index.IndexRemap
import io.sparklance.table.txn.Rewrite

/**
 * pylance's `plan_compaction` (`rust/lance/src/dataset/optimize.rs`): fragments in manifest
 * order; one with more than the threshold of its rows deleted is compacted even alone, one
 * with fewer physical rows than the target is compacted only with neighbours; adjacent
 * candidates covered by the same indices form a bin; a bin of one fragment that needs no
 * deletions materialized is left; bins are split into runs of at least the target rows.
 *
 * pylance also rewrites or keeps the indices covering a bin; bins covered by an index this
 * connector cannot treat as pylance does (see IndexRemap) are left alone and counted.
 */
object CompactionPlanner {
  private final class Bin(val indices: Set[Int]) {
    val fragments = mutable.ArrayBuffer.empty[TableProtos.DataFragment]
    val itself = mutable.ArrayBuffer.empty[Boolean]
    val rows = mutable.ArrayBuffer.empty[Long]
    def noop: Boolean = fragments.isEmpty || (fragments.size == 1 && !itself.head)
  }

  /** Plans the compaction of `s`, whose index section is `indices`. */
  def plan(
      io: FileIO,
      s: Snapshot,
      options: CompactionOptions,
      indices: Seq[TableProtos.IndexMetadata]
  ): CompactionPlan = {
    val all = indices.toIndexedSeq
    val fragmaps = indexFragmaps(all)
    val bins = mutable.ArrayBuffer.empty[Bin]
    var current: Option[Bin] = None
    s.fragments.foreach { f =>
      val ref = FragmentRef(s.root, s, f)
      val physical = RowCounts.physicalRows(io, ref)
      val deleted = RowCounts.deletedRows(io, ref)
      val pct = if (physical == 0) 0.0f else deleted.toFloat / physical.toFloat
      val candidacy =
        if (options.materializeDeletions && pct > options.materializeDeletionsThreshold.toFloat)
          Some(true)
        else if (physical < options.targetRowsPerFragment) Some(false)
        else None
      val indices = fragmaps.indices.filter(i => fragmaps(i)(f.getId)).toSet
      candidacy match {
        case None =>
          current.foreach(bins += _); current = None
        case Some(itself) =>
          if (!current.exists(_.indices == indices)) {
            current.foreach(bins += _)
            current = Some(new Bin(indices))
          }
          val b = current.get
          b.fragments += f; b.itself += itself; b.rows += physical - deleted
      }
    }
    current.foreach(bins += _)
    val stable = (s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0
    val decided = mutable.Map.empty[Int, Boolean]
    def remappable(i: Int) =
      decided.getOrElseUpdate(i, IndexRemap.remappable(io, s, all(i), stable))
    val (kept, skipped) = bins.filterNot(_.noop)
      .partition(_.indices.forall(i => remappable(i)))
    CompactionPlan(
      s,
      kept.toSeq.flatMap(split(_, options.targetRowsPerFragment)),
      skipped.map(_.fragments.size.toLong).sum
    )
  }

  /** pylance's `split_for_size`: runs of at least `min` rows, the rest in the last one. */
  private def split(b: Bin, min: Long): Seq[CompactionGroup] = {
    val out = Seq.newBuilder[CompactionGroup]
    var start = 0
    var done = false
    while (!done) {
      var len = 0
      var count = 0L
      while (count < min && start + len < b.rows.size) { count += b.rows(start + len); len += 1 }
      if (b.rows.drop(start + len).sum >= min) {
        out += CompactionGroup(b.fragments.slice(start, start + len).toSeq)
        start += len
      } else {
        out += CompactionGroup(b.fragments.drop(start).toSeq)
        done = true
      }
    }
    out.result()
  }

  /** Each index's fragments; an index that records none is taken to cover every fragment. */
  private def indexFragmaps(all: IndexedSeq[TableProtos.IndexMetadata])
      : IndexedSeq[Long => Boolean] =
    all.map { i =>
      if (i.getFragmentBitmap.isEmpty) (_: Long) => true
      else { val bm = Rewrite.bitmap(i); (id: Long) => bm.contains(id.toInt) }
    }
}
