package io.sparklance.table.vector

import org.roaringbitmap.RoaringBitmap

import io.sparklance.LanceErrors
import io.sparklance.storage.FileIO
import io.sparklance.table.{FeatureFlags, FragmentRef, LiveRows, ManifestFile, Snapshot}

/**
 * Nearest-neighbour search through the IVF index pylance 14 builds on a vector column,
 * reproducing what pylance 14.0.2 returns (found against it, value by value):
 *  1. The query is scaled to unit length for a cosine index; the `nprobes` partitions whose
 *     centroids are nearest it (l2; dot for a dot index) are scored through the index's
 *     codes ([[IvfQuantizer]]), deleted rows and rows of fragments no longer in the table
 *     left out; the `k * refine_factor` nearest are kept (ties: smaller row id first).
 *  2. With `refine_factor`, those candidates' vectors are read and the `k` nearest by exact
 *     distance kept, with exact distances; without it the `k` from the index keep the
 *     index's (approximate) distances.
 *  3. When some fragments are not covered by the index (appended since), their rows are
 *     searched exactly, and the `k` results are the nearest by exact distance among those and
 *     the index's `k` (whose distances are then exact too).
 * A metric other than the index's makes pylance search exactly (no plan here). With a filter
 * and `prefilter=True`, pylance searches the same way among the rows matching it only (the
 * `allowed` rows here): the index's partitions yield their nearest matching rows.
 */
object IvfSearch {

  /**
   * The plan of an indexed search of `s`, or None when pylance would search exactly: no
   * vector index on the column, or one built for another metric. Fails for index kinds not
   * read here (IVF_RQ, …) and tables with stable row ids.
   */
  def plan(
      io: FileIO,
      s: Snapshot,
      query: VectorQuery,
      allowed: Option[Map[Long, RoaringBitmap]] = None
  ): Option[IvfSearchPlan] = {
    val column = VectorColumn(s, query.column)
    column.checkQuery(query.q)
    val onColumn = ManifestFile.indices(io, s).filter(i =>
      IvfIndex.isVector(i) &&
        i.getFields(0) == column.field.id
    )
    if (onColumn.isEmpty) return None
    val name = onColumn.head.getName
    val deltas = onColumn.filter(_.getName == name)
    if ((s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0)
      throw LanceErrors.unsupported(s"indexed vector search of ${s.root}: the table has " +
        "stable row ids (search with use_index=False)")
    val segments = deltas.map(IvfIndex.open(io, s.root, _)).toIndexedSeq
    if (segments.map(_.metric).distinct.size > 1) throw LanceErrors.unsupported(
      s"vector index $name on ${query.column} has segments of different metrics"
    )
    if (query.metric.exists(_ != segments.head.metric)) return None
    val prepared = segments.map(_.prepare(query.q))
    val probes = probesOf(segments, prepared, query.nprobes)
    val covered = segments.flatMap(_.fragments).toSet
    val live = LiveRows(io, s, allowed)
    val unindexed = s.fragments.filterNot(f => covered(f.getId))
      .map(f => live.fragments(f.getId)).toIndexedSeq
    Some(new IvfSearchPlan(query, column, segments, prepared, probes, unindexed, live))
  }

  /** The (segment, partition) pairs probed for the `prepared` queries of each segment. */
  def probesOf(
      segments: IndexedSeq[IvfIndex],
      prepared: IndexedSeq[Array[Float]],
      nprobes: Option[Int]
  ): IndexedSeq[(Int, Int)] =
    segments.indices.flatMap { i =>
      val n = nprobes.getOrElse(segments(i).numPartitions)
      segments(i).probe(prepared(i), n).map(p => (i, p))
    }

  /** The index's best `k * refine_factor` live candidates among `probes` (of plan's). */
  def scorePartitions(io: FileIO, plan: IvfSearchPlan, probes: Seq[(Int, Int)]): TopK = {
    val top = new TopK(plan.query.candidates)
    probes.groupBy(_._1).toSeq.sortBy(_._1).foreach { case (seg, ps) =>
      plan.segments(seg).search(io, ps.map(_._2), plan.prepared(seg), plan.live, top)
    }
    top
  }

  /** The `k` nearest live rows of the unindexed fragments `frags`, by exact distance. */
  def scanFragments(io: FileIO, plan: IvfSearchPlan, frags: Seq[FragmentRef]): TopK = {
    val top = new TopK(plan.query.k)
    frags.foreach(f => plan.column.scan(io, f, plan.query.q, plan.metric, top, plan.live))
    top
  }

  /**
   * The result from the index's candidates (the merged [[scorePartitions]]) and the
   * unindexed fragments' nearest (the merged [[scanFragments]], None without any): (distance,
   * row address) pairs, nearest first.
   */
  def finish(
      io: FileIO,
      plan: IvfSearchPlan,
      candidates: TopK,
      unindexed: Option[TopK]
  ): Array[(Float, Long)] = {
    val k = plan.query.k
    var ann = candidates.result
    if (plan.query.refineFactor.isDefined) ann = exact(io, plan, ann.map(_._2))
    ann = ann.take(k)
    unindexed match {
      case None => ann
      case Some(flat) =>
        val top = new TopK(k)
        (if (plan.query.refineFactor.isDefined) ann else exact(io, plan, ann.map(_._2)))
          .foreach { case (d, id) => top.offer(d, id) }
        top.addAll(flat)
        top.result
    }
  }

  /** The exact distances of the rows at `addresses`, nearest first. */
  def exact(io: FileIO, plan: IvfSearchPlan, addresses: Array[Long]): Array[(Float, Long)] = {
    val top = new TopK(math.max(1, addresses.length))
    addresses.groupBy(_ >>> 32).foreach { case (frag, addrs) =>
      plan.live.fragments.get(frag).foreach { f =>
        plan.column.distances(
          io,
          f,
          addrs.map(_ & 0xffffffffL).sorted,
          plan.query.q,
          plan.metric
        ).foreach { case (d, id) => top.offer(d, id) }
      }
    }
    top.result
  }

  /** The whole search in this process; None when pylance would search exactly. */
  def search(
      io: FileIO,
      s: Snapshot,
      query: VectorQuery,
      allowed: Option[Map[Long, RoaringBitmap]] = None
  ): Option[Array[(Float, Long)]] =
    plan(io, s, query, allowed).map { p =>
      val cands = scorePartitions(io, p, p.probes)
      val flat = if (p.unindexed.isEmpty) None else Some(scanFragments(io, p, p.unindexed))
      finish(io, p, cands, flat)
    }
}
