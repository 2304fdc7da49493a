package io.sparklance.spark.vector

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{broadcast, col, lit}
import org.apache.spark.sql.types.{FloatType, LongType, StructField, StructType}

import io.sparklance.table.vector.{VectorColumn, VectorMetric, VectorQuery}

/**
 * A single nearest-neighbour search as a DataFrame: what pylance 14's
 * `to_table(nearest={...}, prefilter=True)` returns. The search runs when this is called
 * (through the IVF index when the table has one pylance would use, else exactly; see
 * [[VectorSearchJob]] and [[KnnJoinJob]]); the DataFrame then reads only the batches holding
 * the rows found. Python's `LanceTable.nearest` and SQL's `lance_nearest` both call it.
 */
object NearestRows {
  /** The column of each row's distance to the query, as pylance names it. */
  val DistanceColumn = "_distance"

  /**
   * The `k` rows of the table at `path` (read `options`: a version, storage settings) whose
   * `column` vectors are nearest `q`, nearest first, with their [[DistanceColumn]]; only
   * `columns` of them when not null. `metric`, `nprobes`, `refineFactor` and `filter` may be
   * null: the index's metric (l2 searching exactly), every partition, no refine, every row.
   */
  def nearest(spark: SparkSession, path: String, options: java.util.Map[String, String],
      column: String, q: Array[Float], k: Int, metric: String, nprobes: Integer,
      refineFactor: Integer, useIndex: Boolean, filter: String,
      columns: Array[String]): DataFrame = {
    val (io, root, all, snapshot) = VectorSearchJob.open(spark, path, options)
    VectorColumn(snapshot, column).checkQuery(q)
    val m = Option(metric).map(VectorMetric.parse)
    val probes = Option(nprobes).map(_.intValue)
    val refine = Option(refineFactor).map(_.intValue)
    val query = VectorQuery(column, q, k, m, probes, refine)
    val where = Option(filter)
    val indexed =
      if (useIndex) VectorSearchJob.search(spark, io, root, all, snapshot, query, where)
      else None
    val hits = indexed.getOrElse(KnnJoinJob.search(spark, io, root, all, snapshot, column, "q",
      Array(q), k, m, probes, refine, useIndex = false, where)
      .getOrElse(0, Array.empty[(Float, Long)]).toSeq)
    fetched(spark, root, all, snapshot.version, hits, Option(columns).map(_.toSeq))
  }

  /** The float32 values (little endian) of `packed`: a query vector from Python. */
  def floats(packed: Array[Byte]): Array[Float] = {
    val out = new Array[Float](packed.length / 4)
    java.nio.ByteBuffer.wrap(packed).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer()
      .get(out)
    out
  }

  /**
   * The rows at the addresses of `hits` (distance, row address: nearest first) of `version`,
   * in that order, with their [[DistanceColumn]]: only the batches holding them are read.
   */
  private def fetched(spark: SparkSession, root: String, options: java.util.Map[String, String],
      version: Long, hits: Seq[(Float, Long)], columns: Option[Seq[String]]): DataFrame = {
    val schema = StructType(Seq(StructField("_rowaddr", LongType),
      StructField(DistanceColumn, FloatType), StructField("_rank", LongType)))
    val found = spark.createDataFrame(java.util.Arrays.asList(hits.zipWithIndex.map {
      case ((d, a), i) => Row(a, d, i.toLong)
    }: _*), schema)
    val table = VectorSearchJob.read(spark, root, options, version)
    val names = columns.getOrElse(table.columns.toSeq)
    val picked = names.map(n => table.col(quoted(n)))
    val addresses = hits.map(_._2)
    val rows = table.select(picked :+ col("_rowaddr"): _*)
      .where(if (addresses.isEmpty) lit(false) else col("_rowaddr").isin(addresses: _*))
    // At most k rows: one partition sorted in place (orderBy would sample them in a job first).
    rows.join(broadcast(found), "_rowaddr").coalesce(1).sortWithinPartitions("_rank")
      .select(names.map(n => col(quoted(n))) :+ col(DistanceColumn): _*)
  }

  private def quoted(name: String): String = "`" + name.replace("`", "``") + "`"
}
