package io.sparklance.format.v20

import scala.jdk.CollectionConverters._

import io.sparklance.format._
import io.sparklance.storage.Paths
import io.sparklance.table.{LanceDataset, VersionSpec}

/**
 * Throughput of a full 2.0 scan, run only when SPARKLANCE_BENCH names a 2.0 dataset (e.g. one
 * written by pylance with a few million rows). Prints rows/s; asserts nothing about speed.
 */
class V20ReadBenchmark extends org.scalatest.funsuite.AnyFunSuite {
  private val target = sys.env.get("SPARKLANCE_BENCH")
  if (target.isDefined) test(s"scan ${target.get}") {
    val root = target.get
    val snap = LanceDataset.open(FixtureSupport.io, root).open(VersionSpec.Latest)
    for (round <- 1 to 5) {
      val t0 = System.nanoTime()
      var rows = 0L
      snap.fragments.foreach { frag =>
        frag.getFilesList.asScala.foreach { df =>
          val r = LanceFileReader.open(
            FixtureSupport.io,
            Paths.join(Paths.join(root, "data"), df.getPath),
            df.getFileMajorVersion,
            df.getFileMinorVersion,
            FileFields(
              df.getFieldsList.asScala.map(_.intValue).toArray,
              df.getColumnIndicesList.asScala.map(_.intValue).toArray
            )
          )
          val scan = r.scan(snap.schema.fields, 0, r.numRows)
          var left = r.numRows
          while (left > 0) {
            val n = math.min(8192L, left).toInt; scan.next(n); left -= n; rows += n
          }
          r.close()
        }
      }
      val s = (System.nanoTime() - t0) / 1e9
      println(f"round $round: $rows rows in $s%.3f s = ${rows / s / 1e6}%.1f M rows/s")
    }
  }
}
