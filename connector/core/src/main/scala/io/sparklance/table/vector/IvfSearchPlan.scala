package io.sparklance.table.vector

import org.roaringbitmap.RoaringBitmap

import io.sparklance.table.{FragmentRef, LiveRows}

/**
 * What an indexed search of one table version reads: the index segments (deltas) on the
 * column, the partitions probed in each, the fragments no segment covers, the rows live.
 * Serializable, so the Spark layer can ship it to the tasks that score partitions.
 *
 * @param probes (segment, partition) pairs to score
 */
final class IvfSearchPlan(
    val query: VectorQuery,
    val column: VectorColumn,
    val segments: IndexedSeq[IvfIndex],
    val prepared: IndexedSeq[Array[Float]],
    val probes: IndexedSeq[(Int, Int)],
    val unindexed: IndexedSeq[FragmentRef],
    val live: LiveRows
) extends Serializable {
  def metric: VectorMetric = segments.head.metric

  /** This plan searching only the `allowed` rows (a filter's, pylance's prefilter). */
  def restrictedTo(allowed: Map[Long, RoaringBitmap]): IvfSearchPlan =
    new IvfSearchPlan(
      query,
      column,
      segments,
      prepared,
      probes,
      unindexed,
      new LiveRows(live.io, live.fragments, Some(allowed))
    )

  /**
   * This plan for another query vector `q` (same column, `k`, metric, `nprobes` and
   * `refine_factor`): its own prepared queries and probes, the rest shared.
   */
  def forQuery(q: Array[Float]): IvfSearchPlan = {
    val prep = segments.map(_.prepare(q))
    new IvfSearchPlan(
      query.copy(q = q),
      column,
      segments,
      prep,
      IvfSearch.probesOf(segments, prep, query.nprobes),
      unindexed,
      live
    )
  }
}
