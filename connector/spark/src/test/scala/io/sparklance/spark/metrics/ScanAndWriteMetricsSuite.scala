package io.sparklance.spark.metrics

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.functions.col

import io.sparklance.spark.SparkSessionSuite
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, VersionSpec}
import io.sparklance.testutil.TempDirs

/** The scan and write metrics Spark shows for Lance: each equal to what the table says. */
class ScanAndWriteMetricsSuite extends SparkSessionSuite {
  private def scanMetrics(df: DataFrame): Map[String, Long] = {
    val rows = df.collect()
    assert(rows.nonEmpty)
    val scans = df.queryExecution.executedPlan.collect { case b: BatchScanExec => b }
    assert(scans.size == 1, df.queryExecution.executedPlan.treeString)
    scans.head.metrics.map { case (k, m) => k -> m.value }
  }

  test("a scan reports fragments, storage requests and bytes, and rows it skipped") {
    spark.conf.set("spark.sql.adaptive.enabled", "false")
    val path = TempDirs.create("metrics-").resolve("t.lance").toString
    spark.range(0, 3000).repartition(3).withColumn("s", col("id").cast("string"))
      .write.format("lance").save(path)
    val snapshot = LanceDataset.open(HadoopFileIO.local(), path).open(VersionSpec.Latest)
    val fragments = snapshot.fragments.size
    assert(fragments == 3)
    val bytes = snapshot.fragments.flatMap(_.getFilesList.asScala).map(_.getFileSizeBytes).sum

    val all = scanMetrics(spark.read.format("lance").load(path))
    assert(all(FragmentsRead.Name) == fragments)
    assert(all(RowsSkipped.Name) == 0)
    assert(all(StorageRequests.Name) >= fragments)
    assert(all(StorageBytesRead.Name) > 0 && all(StorageBytesRead.Name) <= bytes)

    // A comparison every Spark line pushes (3.5 pushes `id % 2 = 0` only under ANSI).
    val upper = scanMetrics(spark.read.format("lance").load(path).where("id >= 1000"))
    assert(upper(RowsSkipped.Name) == 1000)
    assert(upper(FragmentsRead.Name) == fragments)
  }

  test("a write's tasks report the bytes and records they wrote as Spark's output metrics") {
    val path = TempDirs.create("metrics-").resolve("w.lance").toString
    val bytes = new java.util.concurrent.atomic.AtomicLong
    val records = new java.util.concurrent.atomic.AtomicLong
    val tasks = new java.util.concurrent.atomic.AtomicInteger
    val listener = new org.apache.spark.scheduler.SparkListener {
      override def onTaskEnd(e: org.apache.spark.scheduler.SparkListenerTaskEnd): Unit =
        if (e.taskMetrics != null && e.taskMetrics.outputMetrics.recordsWritten > 0) {
          bytes.addAndGet(e.taskMetrics.outputMetrics.bytesWritten)
          records.addAndGet(e.taskMetrics.outputMetrics.recordsWritten)
          tasks.incrementAndGet()
        }
    }
    spark.sparkContext.addSparkListener(listener)
    try {
      spark.range(0, 1000).repartition(2).toDF("id").write.format("lance").save(path)
      val files = LanceDataset.open(HadoopFileIO.local(), path).open(VersionSpec.Latest)
        .fragments.flatMap(_.getFilesList.asScala)
      // Listeners hear of tasks on Spark's listener thread: wait for both (not a timing check).
      val deadline = System.nanoTime() + 60L * 1000 * 1000 * 1000
      while (tasks.get < 2 && System.nanoTime() < deadline) Thread.sleep(20)
      assert(records.get == 1000)
      assert(bytes.get == files.map(_.getFileSizeBytes).sum)
    } finally spark.sparkContext.removeSparkListener(listener)
  }
}
