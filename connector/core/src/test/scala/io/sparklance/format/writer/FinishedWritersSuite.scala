package io.sparklance.format.writer

import java.io.FileOutputStream
import java.nio.file.{Files, Paths}

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.storage.{HadoopFileIO, StreamSink}
import io.sparklance.testutil.TempDirs

/**
 * [[FinishedWriters]]: a file written over buffers a finished writer left is the file a
 * fresh writer writes, byte for byte, and kept writers go to writers of the same fields and
 * version only, each once.
 */
class FinishedWritersSuite extends AnyFunSuite {
  import WriterTestSchemas._

  private val io = HadoopFileIO.local()

  /** Text FSST compresses (TPC-H-like comments), a low-cardinality string, numbers, nulls. */
  private val fields = Seq(
    field(0, "id", LogicalType.Int64, nullable = false),
    field(1, "comment", LogicalType.Utf8),
    field(2, "status", LogicalType.Utf8),
    field(3, "price", LogicalType.Decimal(128, 15, 2))
  )
  private val words = Array(
    "final",
    "deposits",
    "furiously",
    "ironic",
    "requests",
    "sleep",
    "carefully",
    "regular",
    "packages",
    "haggle",
    "quickly",
    "express",
    "accounts"
  )

  private def batch(seed: Int, n: Int, first: Long): Array[ColumnArray] = {
    val r = new scala.util.Random(seed)
    def strings(gen: Int => String, nullRate: Double): VarBinaryArray = {
      val nulls = Array.fill(n)(r.nextDouble() < nullRate)
      val bytes = (0 until n).map(i =>
        if (nulls(i)) Array.emptyByteArray else gen(i).getBytes("UTF-8")
      )
      new VarBinaryArray(n, nulls, bytes.scanLeft(0)(_ + _.length).toArray, bytes.flatten.toArray)
    }
    val ids = new Array[Byte](8 * n)
    (0 until n).foreach(i => codec.LittleEndian.putI64(ids, 8 * i, first + i))
    val prices = new Array[Byte](16 * n)
    (0 until n).foreach(i => codec.LittleEndian.putI64(prices, 16 * i, r.nextInt(10000000).toLong))
    Array(
      new FixedWidthArray(n, null, 8, ids),
      strings(_ => Seq.fill(2 + r.nextInt(8))(words(r.nextInt(words.length))).mkString(" "), 0.05),
      strings(_ => Seq("F", "O", "P")(r.nextInt(3)), 0.0),
      new FixedWidthArray(n, Array.fill(n)(r.nextDouble() < 0.1), 16, prices)
    )
  }

  private def write(
      dir: java.nio.file.Path,
      name: String,
      version: FileVersion,
      batches: Seq[Array[ColumnArray]],
      previous: LanceFileWriter
  ): (LanceFileWriter, Array[Byte]) = {
    val path = dir.resolve(name).toString
    val w = new LanceFileWriter(
      new StreamSink(new FileOutputStream(path)),
      fields,
      version,
      FileWriterOptions(256 * 1024),
      previous = previous
    )
    batches.foreach(w.write)
    try w.finish()
    finally w.close()
    (w, Files.readAllBytes(Paths.get(path)))
  }

  for (version <- FileVersion.all.filter(_.structural)) {
    test(s"${version.name}: a first file over buffers a finished writer left is the same file, " +
      "byte for byte, FSST pages included") {
      val dir = TempDirs.create("lance-finished-writers-")
      // Pages of several sizes: the kept buffers are larger, then smaller than needed.
      val first = Seq(batch(1, 4096, 0), batch(2, 9000, 4096))
      val second = Seq(batch(3, 20000, 0), batch(4, 8000, 20000), batch(6, 700, 28000))
      val third = Seq(batch(5, 3000, 0))
      val (w1, _) = write(dir, "a.lance", version, first, null)
      FinishedWriters.give(w1)
      val kept = FinishedWriters.take(fields, version)
      assert(kept eq w1)
      val (w2, b) = write(dir, "b.lance", version, second, kept)
      assert(w2.pageBuffers.zip(w1.pageBuffers).forall { case (x, y) => x eq y })
      FinishedWriters.give(w2)
      val (_, c) = write(dir, "c.lance", version, third, FinishedWriters.take(fields, version))
      assert(b.sameElements(write(dir, "b2.lance", version, second, null)._2))
      assert(c.sameElements(write(dir, "c2.lance", version, third, null)._2))
      // The comments went through FSST (so its code buffer was reused), in several pages.
      val comments = PageKinds(io, dir.resolve("b.lance").toString).filter(_.contains("fsst"))
      assert(comments.size >= 2, PageKinds(io, dir.resolve("b.lance").toString))
    }
  }

  test("a kept writer goes to a writer of the same fields and version, once") {
    val dir = TempDirs.create("lance-finished-writers-")
    val v = FileVersion.V2_1
    val (w, _) = write(dir, "a.lance", v, Seq(batch(1, 100, 0)), null)
    FinishedWriters.give(w)
    assert(FinishedWriters.take(fields.take(3), v) == null)
    assert(FinishedWriters.take(fields, FileVersion.V2_2) == null)
    assert(FinishedWriters.take(fields, FileVersion.V2_0) == null)
    assert(FinishedWriters.take(fields, v) eq w)
    assert(FinishedWriters.take(fields, v) == null)
    // A writer not finished (its buffers may still be in use) is not kept.
    val open = new LanceFileWriter(
      new StreamSink(new FileOutputStream(dir.resolve("b.lance").toString)),
      fields,
      v
    )
    open.write(batch(2, 10, 0))
    FinishedWriters.give(open)
    assert(FinishedWriters.take(fields, v) == null)
    open.close()
  }

  test("at most one writer per processor is kept, the newest") {
    val dir = TempDirs.create("lance-finished-writers-")
    val v = FileVersion.V2_2
    val n = Runtime.getRuntime.availableProcessors + 2
    val ws = (0 until n).map(i => write(dir, s"f$i.lance", v, Seq(batch(i, 50, 0)), null)._1)
    ws.foreach(FinishedWriters.give)
    val taken = Iterator.continually(FinishedWriters.take(fields, v)).takeWhile(_ != null).toList
    assert(taken.size == Runtime.getRuntime.availableProcessors)
    assert(taken.forall(t => ws.takeRight(taken.size).exists(_ eq t)))
  }
}
