package io.sparklance.spark.vector

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.SparkContext
import org.apache.spark.rdd.RDD
import org.apache.spark.sql.SparkSession

import io.sparklance.LanceErrors
import io.sparklance.storage.FileIO
import io.sparklance.table.{LiveRows, Snapshot}
import io.sparklance.table.vector.{
  IvfSearch,
  IvfSearchPlan,
  KnnBatch,
  VectorColumn,
  VectorMetric,
  VectorQuery
}

/**
 * Batch k-NN ("k-NN join"): for every query vector, what [[VectorSearchJob.nearest]] returns
 * for it alone, from one Spark job whatever the number of queries.
 *
 * Through the table's IVF index: the driver probes the centroids for every query and groups
 * the probed partitions with the queries probing each; a task reads each of its partitions'
 * codes once and scores every query probing it, and a task per fragment the index does not
 * cover scans it once for every query. The candidates are merged per query (a shuffle by
 * query) and finished there as a single search is ([[IvfSearch.finish]]: refine, combine
 * with the unindexed fragments' exact nearest). Without an index (or `use_index=False`, or a
 * metric other than the index's): every fragment is read once, each row's exact distance to
 * every query offered to the query's top `k`, merged per query.
 */
object KnnJoinJob {

  /** Probed partitions per task, at most (as [[VectorSearchJob]]). */
  private val PartitionsPerTask = 16

  /** Fragments per task of an exact search, at most. */
  private val FragmentsPerTask = 4

  /**
   * The search, from Python. `queries` holds the query vectors' float32 values (little
   * endian) one after the other, `lengths` each one's number of values (int32, -1 for a null
   * vector: no results); `metric`, `nprobes`, `refineFactor` and `filter` may be null.
   * Returns, little endian: the version searched (int64), the number of queries (int32), then
   * per query the number of results (int32) and each result's row address (int64) and
   * distance (float32), nearest first.
   */
  def knnJoin(
      spark: SparkSession,
      path: String,
      column: String,
      queryColumn: String,
      queries: Array[Byte],
      lengths: Array[Byte],
      k: Int,
      metric: String,
      nprobes: Integer,
      refineFactor: Integer,
      useIndex: Boolean,
      filter: String,
      options: java.util.Map[String, String]
  ): Array[Byte] = {
    val (io, root, all, snapshot) = VectorSearchJob.open(spark, path, options)
    val qs = decode(queries, lengths)
    val results = search(
      spark,
      io,
      root,
      all,
      snapshot,
      column,
      queryColumn,
      qs,
      k,
      Option(metric).map(VectorMetric.parse),
      Option(nprobes).map(_.intValue),
      Option(refineFactor).map(_.intValue),
      useIndex,
      Option(filter)
    )
    encode(snapshot.version, qs.length, results)
  }

  /**
   * The search of every query of `qs` (null: none) in `snapshot`, read from `root` with the
   * read options `all`: query position -> its results (distance, row address), nearest
   * first. Through the IVF index when `useIndex` and pylance would use it, else exact.
   */
  def search(
      spark: SparkSession,
      io: FileIO,
      root: String,
      all: java.util.Map[String, String],
      snapshot: Snapshot,
      column: String,
      queryColumn: String,
      qs: Array[Array[Float]],
      k: Int,
      metric: Option[VectorMetric],
      nprobes: Option[Int],
      refineFactor: Option[Int],
      useIndex: Boolean,
      filter: Option[String]
  ): Map[Int, Array[(Float, Long)]] = {
    val vectors = VectorColumn(snapshot, column)
    KnnBatch.check(qs, vectors.dim, queryColumn, column)
    val first = qs.find(_ != null).getOrElse(new Array[Float](vectors.dim))
    val query = VectorQuery(column, first, k, metric, nprobes, refineFactor)
    lazy val allowed = filter.filter(_.trim.nonEmpty)
      .map(f => VectorSearchJob.matching(spark, root, all, snapshot.version, f))
    if (qs.forall(_ == null)) Map.empty
    else (if (useIndex) IvfSearch.plan(io, snapshot, query) else None) match {
      case Some(p) => indexed(spark, allowed.fold(p)(p.restrictedTo), qs)
      case None =>
        val live = LiveRows(io, snapshot, allowed)
        exact(
          spark,
          vectors,
          metric.getOrElse(VectorMetric.L2),
          live,
          snapshot.fragments.map(f => live.fragments(f.getId)).toIndexedSeq,
          qs,
          k
        )
    }
  }

  /** The indexed search of every query: query position -> its results. */
  private def indexed(
      spark: SparkSession,
      plan: IvfSearchPlan,
      qs: Array[Array[Float]]
  ): Map[Int, Array[(Float, Long)]] = {
    val sc = spark.sparkContext
    val io = plan.live.io
    val probing = KnnBatch.probing(plan, qs)
    val n = probing.size
    val groups =
      math.min(n, math.max(sc.defaultParallelism, (n + PartitionsPerTask - 1) / PartitionsPerTask))
    val work: Seq[Either[Seq[((Int, Int), Array[Int])], Int]] =
      (0 until groups).map(g => Left(probing.indices.filter(_ % groups == g).map(probing))) ++
        plan.unindexed.indices.map(Right(_))
    if (work.isEmpty) return Map.empty
    val bq = sc.broadcast(qs)
    val bp = sc.broadcast(plan)
    val cands = plan.query.candidates
    val k = plan.query.k
    val scored: RDD[(Int, (Array[(Float, Long)], Array[(Float, Long)]))] =
      sc.parallelize(work, work.size).flatMap {
        case Left(parts) =>
          KnnBatch.scorePartitions(io, bp.value, bq.value, parts).iterator
            .map { case (i, top) => (i, (top.result, Array.empty[(Float, Long)])) }
        case Right(f) =>
          val p = bp.value
          KnnBatch.scanFragments(
            io,
            p.column,
            p.metric,
            p.live,
            Seq(p.unindexed(f)),
            bq.value,
            k
          ).iterator.map { case (i, top) => (i, (Array.empty[(Float, Long)], top.result)) }
      }
    val hasUnindexed = plan.unindexed.nonEmpty
    try {
      scored.reduceByKey(
        (a, b) => (KnnBatch.merge(a._1, b._1, cands), KnnBatch.merge(a._2, b._2, k)),
        partitions(sc, work.size)
      ).map {
        case (i, (c, f)) =>
          val p = bp.value.forQuery(bq.value(i))
          i -> IvfSearch.finish(
            io,
            p,
            KnnBatch.topOf(c, cands),
            if (hasUnindexed) Some(KnnBatch.topOf(f, k)) else None
          )
      }.collect().toMap
    } finally {
      bq.destroy()
      bp.destroy()
    }
  }

  /** The exact search of every query in `frags`: query position -> its results. */
  private def exact(
      spark: SparkSession,
      column: VectorColumn,
      metric: VectorMetric,
      live: LiveRows,
      frags: IndexedSeq[io.sparklance.table.FragmentRef],
      qs: Array[Array[Float]],
      k: Int
  ): Map[Int, Array[(Float, Long)]] = {
    val sc = spark.sparkContext
    val n = frags.size
    if (n == 0) return Map.empty
    val groups =
      math.min(n, math.max(sc.defaultParallelism, (n + FragmentsPerTask - 1) / FragmentsPerTask))
    val work = (0 until groups).map(g => frags.indices.filter(_ % groups == g).map(frags))
    val bq = sc.broadcast(qs)
    try {
      sc.parallelize(work, work.size).flatMap { fs =>
        KnnBatch.scanFragments(live.io, column, metric, live, fs, bq.value, k).iterator
          .map { case (i, top) => (i, top.result) }
      }.reduceByKey((a, b) => KnnBatch.merge(a, b, k), partitions(sc, work.size))
        .collect().toMap
    } finally bq.destroy()
  }

  private def partitions(sc: SparkContext, tasks: Int): Int =
    math.max(1, math.min(tasks, sc.defaultParallelism))

  /** The query vectors `queries` and `lengths` hold (see [[knnJoin]]); null for -1. */
  private def decode(queries: Array[Byte], lengths: Array[Byte]): Array[Array[Float]] = {
    val lens = ByteBuffer.wrap(lengths).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer()
    val values = ByteBuffer.wrap(queries).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer()
    val out = new Array[Array[Float]](lens.remaining)
    var i = 0
    while (i < out.length) {
      val n = lens.get(i)
      if (n >= 0) {
        if (n > values.remaining) throw LanceErrors.invalidOption(
          "queries",
          s"${values.remaining} values left",
          s"query row $i holds $n"
        )
        out(i) = new Array[Float](n)
        values.get(out(i))
      }
      i += 1
    }
    out
  }

  /** The results as [[knnJoin]] returns them. */
  private def encode(
      version: Long,
      n: Int,
      results: Map[Int, Array[(Float, Long)]]
  ): Array[Byte] = {
    val size = 12 + 4 * n + results.valuesIterator.map(_.length * 12).sum
    val b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN)
    b.putLong(version).putInt(n)
    (0 until n).foreach { i =>
      val rows = results.getOrElse(i, Array.empty[(Float, Long)])
      b.putInt(rows.length)
      rows.foreach { case (d, id) => b.putLong(id).putFloat(d) }
    }
    b.array()
  }
}
