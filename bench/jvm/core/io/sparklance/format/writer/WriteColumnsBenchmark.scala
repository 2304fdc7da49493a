package io.sparklance.format.writer

import io.sparklance.storage.OutputSink

import org.scalatest.funsuite.AnyFunSuite

/**
 * Encoding cost per column: the rows of the first fragments of a dataset named by
 * `SPARKLANCE_WRITE_BENCH` (not committed: a TPC-H table written by pylance or Spark), read
 * once into memory, then written column by column to a sink that keeps nothing. Skipped when
 * unset; reports ns per row, asserts nothing about speed.
 */
class WriteColumnsBenchmark extends AnyFunSuite {
  private val root = Option(System.getProperty("sparklance.writeBench"))
    .orElse(sys.env.get("SPARKLANCE_WRITE_BENCH"))

  test("write throughput per column") {
    assume(root.isDefined, "set SPARKLANCE_WRITE_BENCH to a dataset path")
    import _root_.io.sparklance.format._
    import _root_.io.sparklance.format.structural.StructuralFileReader
    import _root_.io.sparklance.table._
    val io = _root_.io.sparklance.format.structural.StructuralTestSupport.io
    val snap = LanceDataset.open(io, root.get).open(VersionSpec.Latest)
    val frags = snap.fragments.take(sys.env.getOrElse("FRAGS", "1").toInt)
      .map(FragmentRef(root.get, snap, _))
    val only = sys.env.get("COLS").map(_.split(",").toSet)
    val rounds = sys.env.getOrElse("ROUNDS", "5").toInt
    val sink = new OutputSink {
      private var pos = 0L
      def position: Long = pos
      def write(b: Array[Byte], off: Int, len: Int): Unit = pos += len
      def close(): Unit = ()
    }
    val fields = snap.schema.fields.filter(f => only.forall(_.contains(f.name)))
    val data = fields.map { field =>
      field -> frags.flatMap { f =>
        val df = f.files.head
        val c = FileContainer.open(io.open(df.path))
        val scan =
          StructuralFileReader.scan(c, Seq(field), df.fileFields, df.minor, 0, f.physicalRows)
        var done = 0L
        val out = Seq.newBuilder[Array[ColumnArray]]
        while (done < f.physicalRows) {
          val k = math.min(8192L, f.physicalRows - done).toInt
          out += scan.next(k).map(ColumnArrays.materialize); done += k
        }
        out.result()
      }
    }
    def once(field: LanceField, batches: Seq[Array[ColumnArray]]): Long = {
      val t0 = System.nanoTime()
      val w = new LanceFileWriter(sink, Seq(field), FileVersion.Default)
      batches.foreach(w.write)
      w.finish()
      System.nanoTime() - t0
    }
    for (_ <- 0 until 2; (f, b) <- data) once(f, b) // the JIT warmed up on every column
    var total = 0.0
    for ((field, batches) <- data) {
      val rows = batches.map(_(0).length.toLong).sum
      val times = (0 until rounds).map(_ => once(field, batches)).sorted
      total += times.head.toDouble / rows
      info(f"${field.name}%-16s $rows rows: ${times.head.toDouble / rows}%.1f ns/row " +
        f"(median ${times(rounds / 2).toDouble / rows}%.1f)")
    }
    info(f"all columns: $total%.1f ns/row")
  }
}
