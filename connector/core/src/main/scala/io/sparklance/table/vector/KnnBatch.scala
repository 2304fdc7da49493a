package io.sparklance.table.vector

import scala.collection.mutable

import io.sparklance.LanceErrors
import io.sparklance.storage.FileIO
import io.sparklance.table.{FragmentRef, LiveRows}

/**
 * Batch k-nearest-neighbour search: many query vectors searched in one pass over a table, so
 * that each IVF partition's codes (and each fragment no index covers) are read once however
 * many queries need them. Every query's result is what [[IvfSearch]] returns for it alone:
 * the pieces here are [[IvfSearch.scorePartitions]] and [[IvfSearch.scanFragments]] for many
 * queries, merged per query and finished by [[IvfSearch.finish]] as a single search is.
 *
 * Queries are indexed by their position; a null query (no vector) is searched for nothing.
 */
object KnnBatch {

  /**
   * Fails unless every non-null query holds `dim` values, naming the first one that does not
   * by its position and the query column `queryColumn`.
   */
  def check(queries: Array[Array[Float]], dim: Int, queryColumn: String, column: String): Unit = {
    var i = 0
    while (i < queries.length) {
      val q = queries(i)
      if (q != null && q.length != dim) throw LanceErrors.invalidOption(
        "query_column",
        queryColumn,
        s"query row $i holds a vector of ${q.length} values; the table's " +
          s"column $column holds vectors of $dim"
      )
      i += 1
    }
  }

  /**
   * The (segment, partition) pairs the queries probe, each with the queries probing it
   * (ascending), in (segment, partition) order; `plan` is any query's plan of the table.
   */
  def probing(
      plan: IvfSearchPlan,
      queries: Array[Array[Float]]
  ): IndexedSeq[((Int, Int), Array[Int])] = {
    val by = mutable.HashMap.empty[(Int, Int), mutable.ArrayBuilder[Int]]
    queries.indices.foreach { i =>
      if (queries(i) != null) plan.forQuery(queries(i)).probes.foreach { p =>
        by.getOrElseUpdate(p, mutable.ArrayBuilder.make[Int]) += i
      }
    }
    by.toIndexedSeq.map { case (p, qs) => (p, qs.result()) }.sortBy(_._1)
  }

  /**
   * Scores the partitions of `work` (pairs of [[probing]]) for the queries probing each:
   * query position -> its best `k * refine_factor` live candidates among them. Each
   * partition is read once.
   */
  def scorePartitions(
      io: FileIO,
      plan: IvfSearchPlan,
      queries: Array[Array[Float]],
      work: Seq[((Int, Int), Array[Int])]
  ): Map[Int, TopK] = {
    val tops = mutable.HashMap.empty[Int, TopK]
    val prepared = mutable.HashMap.empty[(Int, Int), Array[Float]]
    work.groupBy(_._1._1).toSeq.sortBy(_._1).foreach { case (seg, parts) =>
      val index = plan.segments(seg)
      val scored = parts.map { case ((_, p), qs) =>
        (
          p,
          qs.toSeq.map { i =>
            (
              prepared.getOrElseUpdate((seg, i), index.prepare(queries(i))),
              tops.getOrElseUpdate(i, new TopK(plan.query.candidates))
            )
          }
        )
      }
      index.searchMany(io, scored, plan.live)
    }
    tops.toMap
  }

  /**
   * The `k` nearest live rows of fragments `frags` to every query by exact distance, each
   * fragment read once: query position -> its top (null queries have none).
   */
  def scanFragments(
      io: FileIO,
      column: VectorColumn,
      metric: VectorMetric,
      live: LiveRows,
      frags: Seq[FragmentRef],
      queries: Array[Array[Float]],
      k: Int
  ): Map[Int, TopK] = {
    val asked = queries.indices.filter(i => queries(i) != null).toArray
    val tops = asked.map(_ => new TopK(k))
    if (asked.nonEmpty) {
      val qs = asked.map(queries)
      frags.foreach(f => column.scanMany(io, f, qs, metric, tops, live))
    }
    asked.indices.map(j => asked(j) -> tops(j)).toMap
  }

  /** The pairs of `a` and `b` (results of tops of `k`), as one top `k`, nearest first. */
  def merge(a: Array[(Float, Long)], b: Array[(Float, Long)], k: Int): Array[(Float, Long)] =
    if (a.isEmpty) b
    else if (b.isEmpty) a
    else {
      val top = new TopK(k)
      a.foreach { case (d, id) => top.offer(d, id) }
      b.foreach { case (d, id) => top.offer(d, id) }
      top.result
    }

  /** A top of `k` holding `pairs`. */
  def topOf(pairs: Array[(Float, Long)], k: Int): TopK = {
    val top = new TopK(k)
    pairs.foreach { case (d, id) => top.offer(d, id) }
    top
  }
}
