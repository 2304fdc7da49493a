package io.sparklance.format.structural

import org.scalatest.funsuite.AnyFunSuite

/**
 * Throughput of a full scan of a large pylance-written dataset named by the system property
 * `sparklance.bench` (not committed: write one with pylance). Skipped when unset; reports
 * rows/s per column, asserts nothing about speed.
 */
class StructuralBenchmark extends AnyFunSuite {
  private val root =
    Option(System.getProperty("sparklance.bench")).orElse(sys.env.get("SPARKLANCE_BENCH"))

  test("scan throughput") {
    assume(root.isDefined, "set SPARKLANCE_BENCH to a dataset path")
    import _root_.io.sparklance.format._
    import _root_.io.sparklance.table._
    val io = StructuralTestSupport.io
    val snap = LanceDataset.open(io, root.get).open(VersionSpec.Latest)
    for (field <- snap.schema.fields; round <- 0 until 3) {
      val t0 = System.nanoTime(); var rows = 0L
      snap.fragments.foreach { f0 =>
        val f = FragmentRef(root.get, snap, f0); val df = f.files.head
        val c = FileContainer.open(io.open(df.path))
        val scan =
          StructuralFileReader.scan(c, Seq(field), df.fileFields, df.minor, 0, f.physicalRows)
        var done = 0L
        while (done < f.physicalRows) {
          val k = math.min(8192L, f.physicalRows - done).toInt; scan.next(k); done += k
        }
        rows += done
      }
      val s = (System.nanoTime() - t0) / 1e9
      info(
        f"${field.name}%-6s round $round: $rows rows in $s%.2f s = ${rows / s / 1e6}%.1f M rows/s"
      )
    }
  }
}
