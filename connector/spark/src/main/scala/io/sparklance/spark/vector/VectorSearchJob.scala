package io.sparklance.spark.vector

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.roaringbitmap.RoaringBitmap
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.spark.{LanceReadOptions, LanceTables}
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{LanceDataset, LiveRows, Snapshot}
import io.sparklance.table.vector.{IvfSearch, IvfSearchPlan, TopK, VectorMetric, VectorQuery}

/**
 * Nearest-neighbour search through a table's IVF index, distributed: the driver plans (opens
 * the index, probes the centroids), Spark tasks score groups of the probed partitions (each
 * reading its partitions' rows of `auxiliary.idx`) and search the fragments the index does
 * not cover exactly, and the driver merges their top candidates, refines them and combines
 * ([[IvfSearch.finish]]). What pylance 14's `to_table(nearest={...})` returns; see
 * [[IvfSearch]] for how it was found to behave.
 */
object VectorSearchJob {

  /** Probed partitions per task, at most. */
  private val PartitionsPerTask = 16

  /** Probed rows the driver scores itself, at most (when no fragment is unindexed). */
  private val LocalRows = 100000L

  /**
   * The search of `snapshot` (read from `root` with the read options `all`) through its IVF
   * index: the results, nearest first, as (distance, row address); None when pylance would
   * search exactly (no vector index on the column, or one built for another metric). A
   * `filter` (Spark SQL) is applied before the search, as pylance's `prefilter=True`: the
   * rows matching it are found by a Spark scan of the version searched and only those are
   * scored.
   */
  def search(
      spark: SparkSession,
      io: FileIO,
      root: String,
      all: java.util.Map[String, String],
      snapshot: Snapshot,
      query: VectorQuery,
      filter: Option[String]
  ): Option[Seq[(Float, Long)]] =
    IvfSearch.plan(io, snapshot, query).map { plan =>
      val restricted = filter.filter(_.trim.nonEmpty).fold(plan) { f =>
        plan.restrictedTo(matching(spark, root, all, snapshot.version, f))
      }
      val (cands, flat) = run(spark, io, restricted)
      IvfSearch.finish(
        io,
        restricted,
        cands,
        if (restricted.unindexed.isEmpty) None else Some(flat)
      ).toSeq
    }

  /**
   * The table at `path` with the read `options` (a version, storage settings): its FileIO,
   * its path as read, the options with the path, and the snapshot read.
   */
  private[vector] def open(
      spark: SparkSession,
      path: String,
      options: java.util.Map[String, String]
  ): (FileIO, String, java.util.Map[String, String], Snapshot) = {
    val all = new java.util.HashMap[String, String]()
    Option(options).foreach(all.putAll)
    all.put(LanceReadOptions.Path, Paths.stripTrailingSlash(path))
    val opts = new CaseInsensitiveStringMap(all)
    val io = LanceTables.fileIO(spark, opts)
    val read = LanceReadOptions.parse(
      opts,
      java.time.ZoneId.of(spark.sessionState.conf.sessionLocalTimeZone),
      128L << 20
    )
    (io, read.path, all, LanceDataset.open(io, read.path).open(read.versionSpec))
  }

  /** The rows of `version` matching `filter`, by fragment: a Spark scan of `_rowaddr`. */
  private[vector] def matching(
      spark: SparkSession,
      root: String,
      options: java.util.Map[String, String],
      version: Long,
      filter: String
  ): Map[Long, RoaringBitmap] = {
    val rows = read(spark, root, options, version).where(filter).select("_rowaddr")
    rows.rdd.mapPartitions(it => Iterator(LiveRows.allowList(it.map(_.getLong(0)))))
      .collect().foldLeft(Map.empty[Long, RoaringBitmap])(LiveRows.union)
  }

  /** `version` of the table at `root`, read with `options` but their version and path. */
  private[vector] def read(
      spark: SparkSession,
      root: String,
      options: java.util.Map[String, String],
      version: Long
  ): DataFrame = {
    var reader = spark.read.format("lance").option(LanceReadOptions.Version, version.toString)
    options.forEach((k, v) => if (!isVersionKey(k)) reader = reader.option(k, v))
    reader.load(root)
  }

  private val VersionKeys = Set(
    LanceReadOptions.Version,
    LanceReadOptions.VersionAsOf,
    LanceReadOptions.Tag,
    LanceReadOptions.Timestamp,
    LanceReadOptions.TimestampAsOf,
    LanceReadOptions.Branch,
    LanceReadOptions.Path
  ).map(_.toLowerCase)

  /** Whether the read option `key` names the version read (or the path). */
  private[vector] def isVersionKey(key: String): Boolean = VersionKeys(key.toLowerCase)

  /**
   * Scores the probed partitions and scans the unindexed fragments in Spark tasks — or, when
   * every fragment is indexed and the probed partitions hold few rows, in the driver: a Spark
   * job would cost more than the work.
   */
  private def run(spark: SparkSession, io: FileIO, plan: IvfSearchPlan): (TopK, TopK) = {
    val probedRows = plan.probes.map { case (s, p) => plan.segments(s).lengths(p).toLong }.sum
    if (plan.unindexed.isEmpty && probedRows <= LocalRows)
      return (IvfSearch.scorePartitions(io, plan, plan.probes), new TopK(plan.query.k))
    // At least a task per core, at most PartitionsPerTask partitions a task; round robin,
    // so the nearest partitions (the likeliest to hold results) spread over the tasks.
    val n = plan.probes.size
    val groups = math.min(
      n,
      math.max(
        spark.sparkContext.defaultParallelism,
        (n + PartitionsPerTask - 1) / PartitionsPerTask
      )
    )
    val probeGroups: Seq[Either[Seq[(Int, Int)], Int]] = (0 until groups).map { g =>
      Left(plan.probes.indices.filter(_ % groups == g).map(plan.probes))
    }
    val fragTasks: Seq[Either[Seq[(Int, Int)], Int]] = plan.unindexed.indices.map(Right(_))
    val work = probeGroups ++ fragTasks
    val cands = new TopK(plan.query.candidates)
    val flat = new TopK(plan.query.k)
    if (work.nonEmpty) {
      val results = spark.sparkContext.parallelize(work, work.size).map {
        case Left(probes) => (true, IvfSearch.scorePartitions(io, plan, probes).result)
        case Right(f) => (false, IvfSearch.scanFragments(io, plan, Seq(plan.unindexed(f))).result)
      }.collect()
      results.foreach { case (isIndex, rows) =>
        val into = if (isIndex) cands else flat
        rows.foreach { case (d, id) => into.offer(d, id) }
      }
    }
    (cands, flat)
  }
}
