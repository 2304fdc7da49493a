package io.sparklance.spark

import org.apache.spark.sql.types.StructType

import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{FragmentRef, LanceDataset, VersionSpec}

/**
 * The executor side of `SELECT sum(vec[0])` without Spark's planning and codegen: plans the
 * partitions, reads each through [[LanceColumnarReader]] into column vectors and sums item 0 of
 * every vector. Runs only when SPARKLANCE_VEC_BENCH lists datasets (comma-separated) holding a
 * fixed-size list column `vec`; SPARKLANCE_VEC_SPLITS=pages,rows1024 also times the old
 * 1024-row splits. The runs take turns, round after round, so they share the box's noise.
 * Prints wall and reading-thread CPU times; asserts nothing about speed.
 */
class VectorScanBenchmark extends org.scalatest.funsuite.AnyFunSuite {
  private val targets = sys.env.get("SPARKLANCE_VEC_BENCH").map(_.split(",").toSeq).getOrElse(Nil)
  if (targets.nonEmpty) test(s"sum(vec[0]) over ${targets.mkString(", ")}") {
    val io = HadoopFileIO.local()
    val rounds = sys.env.getOrElse("SPARKLANCE_VEC_ROUNDS", "7").toInt
    // "pages": page-aligned splits (the default); "rows1024": splits at multiples of 1024 rows.
    val configs = sys.env.getOrElse("SPARKLANCE_VEC_SPLITS", "pages").split(",").toSeq
    val runs = for (t <- targets; c <- configs) yield s"$t@$c"
    val times = runs.map(_ -> Seq.newBuilder[Double]).toMap
    val cpuTimes = runs.map(_ -> Seq.newBuilder[Double]).toMap
    for (round <- 0 to rounds; run <- runs) {
      val Array(root, config) = run.split("@")
      val planFields = (snapFields: Seq[_root_.io.sparklance.format.LanceField]) =>
        if (config == "rows1024") Nil else snapFields
      val snap = LanceDataset.open(io, root).open(VersionSpec.Latest)
      val vec = snap.schema.fields.filter(_.name == "vec")
      val schema = StructType(vec.map(SchemaConverter.toSparkField))
      val frags = snap.fragments.map(FragmentRef(snap.root, snap, _))
      val bean = java.lang.management.ManagementFactory.getThreadMXBean
      val c0 = bean.getCurrentThreadCpuTime
      val t0 = System.nanoTime()
      var sum = 0.0
      SplitPlanner.plan(io, frags, 128L << 20, 4L << 20, planFields(vec)).foreach { p =>
        val r = new LanceColumnarReader(io, p, vec, schema, 4096)
        while (r.next()) {
          val b = r.get()
          val col = b.column(0)
          var i = 0
          while (i < b.numRows()) { sum += col.getArray(i).getFloat(0); i += 1 }
        }
        r.close()
      }
      val s = (System.nanoTime() - t0) / 1e9
      val cpu = (bean.getCurrentThreadCpuTime - c0) / 1e9
      if (round > 0) { times(run) += s; cpuTimes(run) += cpu } // round 0 warms up
      println(f"round $round $run: $s%.3f s wall, $cpu%.3f s cpu (sum $sum%.6f)")
    }
    runs.foreach { t =>
      val ts = times(t).result().sorted
      val cs = cpuTimes(t).result().sorted
      println(f"$t: wall median ${ts(ts.size / 2)}%.3f s (min ${ts.head}%.3f), cpu median ${cs(
          cs.size / 2
        )}%.3f s (min ${cs.head}%.3f) over ${ts.size} rounds")
    }
  }
}
