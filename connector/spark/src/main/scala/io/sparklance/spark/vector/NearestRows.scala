package io.sparklance.spark.vector

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.{FloatType, StructField, StructType}

import io.sparklance.table.vector.{VectorColumn, VectorMetric, VectorQuery}

/**
 * A single nearest-neighbour search as a DataFrame: what pylance 14's
 * `to_table(nearest={...}, prefilter=True)` returns. The search runs when this is called
 * (through the IVF index when the table has one pylance would use, else exactly; see
 * [[VectorSearchJob]] and [[KnnJoinJob]]), and so does the read of the rows found; the
 * DataFrame holds them. Python's `LanceTable.nearest` and SQL's `lance_nearest` both call it.
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
  def nearest(
      spark: SparkSession,
      path: String,
      options: java.util.Map[String, String],
      column: String,
      q: Array[Float],
      k: Int,
      metric: String,
      nprobes: Integer,
      refineFactor: Integer,
      useIndex: Boolean,
      filter: String,
      columns: Array[String]
  ): DataFrame = {
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
    val hits = indexed.getOrElse(KnnJoinJob.search(
      spark,
      io,
      root,
      all,
      snapshot,
      column,
      "q",
      Array(q),
      k,
      m,
      probes,
      refine,
      useIndex = false,
      where
    )
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
   * in that order, with their [[DistanceColumn]]: read now by one Spark job that decodes only
   * the batches holding them, and held by the DataFrame (a local relation of at most `k`
   * rows), so using it runs no further job.
   */
  private def fetched(
      spark: SparkSession,
      root: String,
      options: java.util.Map[String, String],
      version: Long,
      hits: Seq[(Float, Long)],
      columns: Option[Seq[String]]
  ): DataFrame = {
    val table = VectorSearchJob.read(spark, root, options, version)
    val picked = columns.getOrElse(table.columns.toSeq).map(n => table.col(quoted(n)))
    val shown = table.select(picked: _*).schema
    val schema = StructType(shown.fields :+ StructField(DistanceColumn, FloatType))
    val addresses = hits.map(_._2)
    val read = if (addresses.isEmpty) Array.empty[Row]
    else
      table.select(picked :+ col("_rowaddr"): _*).where(col("_rowaddr").isin(addresses: _*))
        .collect()
    val byAddress = read.map(r => r.getLong(shown.length) -> r).toMap
    val rows = hits.flatMap { case (d, a) =>
      byAddress.get(a).map(r => Row.fromSeq(r.toSeq.take(shown.length) :+ d))
    }
    spark.createDataFrame(java.util.Arrays.asList(rows: _*), schema)
  }

  private def quoted(name: String): String = "`" + name.replace("`", "``") + "`"
}
