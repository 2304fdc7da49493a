package io.sparklance.spark

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec

import io.sparklance.testutil.TempDirs

/**
 * One table object, many scans: the scans of one loaded table share one broadcast of its
 * storage settings (serializing a Hadoop configuration per scan cost milliseconds each), and
 * read what the same filters over Spark's own rows give.
 */
class LanceTableSuite extends SparkSessionSuite {
  private def scans(df: DataFrame): Seq[BatchScanExec] =
    df.queryExecution.executedPlan.collect { case s: BatchScanExec => s }

  private def broadcastIds(df: DataFrame): Seq[Long] = scans(df).map(_.readerFactory match {
    case f: LancePartitionReaderFactory => f.io.id
    case other => fail(s"not a Lance reader factory: $other")
  })

  private def withoutAdaptive[T](body: => T): T = {
    val before = spark.conf.getOption("spark.sql.adaptive.enabled")
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    try body
    finally before match {
        case Some(v) => spark.conf.set("spark.sql.adaptive.enabled", v)
        case None => spark.conf.unset("spark.sql.adaptive.enabled")
      }
  }

  test("the scans of one loaded table share one broadcast of its storage settings") {
    val path = TempDirs.create("lance-table-").resolve("ds").toString
    val rows = spark.range(0, 5000).selectExpr("id", "id % 7 AS k")
    rows.write.format("lance").save(path)
    val df = spark.read.format("lance").load(path)
    withoutAdaptive {
      val a = df.filter("k = 1")
      val b = df.filter("k = 2").select("id")
      val joined = df.alias("x").join(df.alias("y").filter("k = 3"), "id")
      val ids = Seq(a, b, joined).flatMap(broadcastIds)
      assert(ids.size == 4, ids)
      assert(ids.distinct.size == 1, ids)
      assert(a.collect().map(_.toString).sorted sameElements
        rows.filter("k = 1").collect().map(_.toString).sorted)
      assert(joined.count() == rows.filter("k = 3").count())
      // Another load is another table object, with a broadcast of its own.
      val again = spark.read.format("lance").load(path).filter("k = 1")
      assert(broadcastIds(again).distinct.size == 1)
      assert(broadcastIds(again) != broadcastIds(a))
      assert(again.count() == rows.filter("k = 1").count())
    }
  }
}
