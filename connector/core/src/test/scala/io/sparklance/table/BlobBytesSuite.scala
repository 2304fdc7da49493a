package io.sparklance.table

import java.nio.file.{Files, Path}

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.{LanceCorruptFileException, LanceUnsupportedException}
import io.sparklance.format._
import io.sparklance.format.blob.{BlobColumn, BlobDescriptors, BlobPaths}
import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.testutil.{RecordingFileIO, TempDirs}

/**
 * BlobBytes on hand-made descriptors over files written here: every kind's location, range
 * coalescing, and the errors for descriptors that point nowhere. (The fixtures' bytes are
 * compared with pylance in BlobFixtureSuite.)
 */
class BlobBytesSuite extends AnyFunSuite {
  private val dir: Path = TempDirs.create("blob-bytes-")
  private val dataDir = Files.createDirectories(dir.resolve("ds/data"))
  private val baseDir = Files.createDirectories(dir.resolve("base"))
  private val dataFile = dataDir.resolve("0123abcd.lance")
  private val content: Array[Byte] = Array.tabulate(1 << 20)(i => ((i * 31) ^ (i >>> 9)).toByte)
  Files.write(dataFile, content)

  private def fragment = FragmentRef(
    0,
    1,
    physicalRowsTrusted = true,
    Seq(DataFileRef(dataFile.toString, Array(1), Array(0), 2, 2, content.length)),
    None,
    deletionIsBitmap = false,
    0,
    BlobRoots(dir.resolve("ds").toString, Map(3 -> baseDir.toUri.toString))
  )

  private val v2Field = LanceField(
    1,
    -1,
    "b",
    LogicalType.Struct,
    nullable = true,
    Map(BlobColumn.ExtensionNameKey -> BlobColumn.V2ExtensionName.getBytes("UTF-8")),
    Nil
  )
  private val v1Field = LanceField(
    1,
    -1,
    "b",
    LogicalType.LargeBinary,
    nullable = true,
    Map(BlobColumn.BlobMetaKey -> "true".getBytes("UTF-8")),
    Nil
  )

  private def longs(xs: Seq[Long]) = {
    val a = new Array[Byte](xs.size * 8); xs.indices.foreach(i => LE.putI64(a, i * 8, xs(i))); a
  }
  private def ints(xs: Seq[Int]) = {
    val a = new Array[Byte](xs.size * 4); xs.indices.foreach(i => LE.putI32(a, i * 4, xs(i))); a
  }
  private def strings(xs: Seq[String]): VarBinaryArray = {
    val bytes = xs.map(_.getBytes("UTF-8"))
    new VarBinaryArray(
      xs.size,
      null,
      bytes.scanLeft(0)(_ + _.length).toArray,
      bytes.flatten.toArray
    )
  }

  /** One v2 descriptor: (kind, position, size, blob_id, uri), or null for a null row. */
  private def v2(rows: Seq[(Int, Long, Long, Int, String)]): StructArray = {
    val n = rows.size
    val nulls = rows.map(_ == null).toArray
    val r = rows.map(x => if (x == null) (0, 0L, 0L, 0, "") else x)
    new StructArray(
      n,
      if (nulls.contains(true)) nulls else null,
      Array(
        new FixedWidthArray(n, null, 1, r.map(_._1.toByte).toArray),
        new FixedWidthArray(n, null, 8, longs(r.map(_._2))),
        new FixedWidthArray(n, null, 8, longs(r.map(_._3))),
        new FixedWidthArray(n, null, 4, ints(r.map(_._4))),
        strings(r.map(_._5))
      )
    )
  }

  private def values(a: ColumnArray): Seq[Option[Seq[Byte]]] = {
    val v = a.asInstanceOf[VarBinaryArray]
    (0 until v.length).map(i =>
      if (v.isNull(i)) None else Some(v.data.slice(v.offsets(i), v.offsets(i + 1)).toSeq)
    )
  }
  private def slice(a: Array[Byte], from: Long, len: Long): Option[Seq[Byte]] =
    Some(a.slice(from.toInt, (from + len).toInt).toSeq)

  test(
    "inline blobs: neighbouring ranges share one read, far ones are read alone, null and empty stay so"
  ) {
    val rec = new RecordingFileIO()
    val desc = v2(Seq(
      (0, 0L, 10L, 0, ""),
      (0, 20L, 10L, 0, ""),
      null,
      (0, 15L, 10L, 0, ""),
      (0, 600000L, 100L, 0, ""),
      (0, 64L, 0L, 0, "")
    ))
    val got = values(new BlobBytes(rec, fragment).materialize(v2Field, desc))
    assert(got == Seq(
      slice(content, 0, 10),
      slice(content, 20, 10),
      None,
      slice(content, 15, 10),
      slice(content, 600000, 100),
      Some(Seq.empty)
    ))
    assert(rec.rangedReads.map(r => (r._2, r._3)).sorted == Seq((0L, 30), (600000L, 100)))
  }

  test("many rows in reverse offset order come back in row order, in few reads") {
    val rec = new RecordingFileIO()
    val rows = (0 until 200).map(i => (0, (199 - i) * 1000L, 500L, 0, ""))
    val bb = new BlobBytes(rec, fragment)
    val got = values(bb.materialize(v2Field, v2(rows)))
    bb.close()
    assert(got == rows.map(r => slice(content, r._2, r._3)))
    // 200 KiB of neighbouring ranges: one coalesced read.
    assert(rec.rangedReads.size == 1, rec.rangedReads)
  }

  test("blob v1 descriptors: 2.0's (1, 0) is null, (0, 0) empty; bytes in the data file") {
    val d = new StructArray(
      4,
      null,
      Array(
        new FixedWidthArray(4, null, 8, longs(Seq(100L, 1L, 0L, 5000L))),
        new FixedWidthArray(4, null, 8, longs(Seq(7L, 0L, 0L, 3L)))
      )
    )
    val marked = BlobDescriptors.markV20Nulls(d)
    val got = values(new BlobBytes(new RecordingFileIO(), fragment).materialize(v1Field, marked))
    assert(got == Seq(slice(content, 100, 7), None, Some(Seq.empty), slice(content, 5000, 3)))
  }

  test("packed and dedicated blobs come from the data file's sidecars") {
    val pack = Array.tabulate[Byte](5000)(i => (i * 7).toByte)
    val dedicated = Array.tabulate[Byte](3000)(i => (i * 13 + 1).toByte)
    def write(id: Int, b: Array[Byte]) = {
      val p = java.nio.file.Paths.get(BlobPaths.sidecar(dataFile.toString, id))
      Files.createDirectories(p.getParent); Files.write(p, b)
    }
    write(1, pack); write(2, dedicated)
    val got = values(new BlobBytes(new RecordingFileIO(), fragment).materialize(
      v2Field,
      v2(Seq((1, 100L, 50L, 1, ""), (2, 0L, 3000L, 2, ""), (1, 4990L, 10L, 1, "")))
    ))
    assert(got == Seq(slice(pack, 100, 50), Some(dedicated.toSeq), slice(pack, 4990, 10)))
  }

  test("external blobs: absolute URIs and paths relative to a base path; size 0 reads to the end") {
    val ext = dir.resolve("ext.bin")
    val e = Array.tabulate[Byte](777)(i => (i + 3).toByte)
    Files.write(ext, e)
    Files.write(baseDir.resolve("c.bin"), e.reverse)
    val got = values(new BlobBytes(new RecordingFileIO(), fragment).materialize(
      v2Field,
      v2(Seq(
        (3, 0L, 0L, 0, ext.toUri.toString),
        (3, 10L, 20L, 0, ext.toUri.toString),
        (3, 700L, 0L, 0, ext.toString),
        (3, 5L, 6L, 3, "c.bin")
      ))
    ))
    assert(got == Seq(Some(e.toSeq), slice(e, 10, 20), slice(e, 700, 77), slice(e.reverse, 5, 6)))
  }

  test("managed blobs: relative to the dataset root, or to the base path they name") {
    val m = Array.tabulate[Byte](64)(i => (i * 5).toByte)
    Files.createDirectories(dir.resolve("ds/_blobs"));
    Files.write(dir.resolve("ds/_blobs/m.blob"), m)
    Files.createDirectories(baseDir.resolve("_blobs"));
    Files.write(baseDir.resolve("_blobs/n.blob"), m.reverse)
    val got = values(new BlobBytes(new RecordingFileIO(), fragment).materialize(
      v2Field,
      v2(Seq(
        (4, 3L, 9L, 0, "_blobs/m.blob"),
        (5, 0L, 64L, 3, "_blobs/n.blob"),
        (4, 0L, 0L, 0, "_blobs/m.blob")
      ))
    ))
    assert(got == Seq(slice(m, 3, 9), Some(m.reverse.toSeq), Some(Seq.empty)))
  }

  private def failure[E <: Throwable](rows: Seq[(Int, Long, Long, Int, String)])(implicit
      ct: scala.reflect.ClassTag[E]
  ): String =
    intercept[E](
      new BlobBytes(new RecordingFileIO(), fragment).materialize(v2Field, v2(rows))
    ).getMessage

  test("descriptors pointing nowhere fail naming the column and file") {
    val outside = failure[LanceCorruptFileException](Seq((0, content.length - 5L, 10L, 0, "")))
    assert(
      outside.contains("'b'") && outside.contains(dataFile.toString) && outside.contains("outside"),
      outside
    )
    val missing = failure[LanceCorruptFileException](Seq((1, 0L, 10L, 9, "")))
    assert(
      missing.contains(BlobPaths.sidecar(dataFile.toString, 9)) && missing.contains("'b'"),
      missing
    )
    val kind = failure[LanceUnsupportedException](Seq((9, 0L, 10L, 0, "")))
    assert(kind.contains("blob kind 9") && kind.contains("'b'"), kind)
    val base = failure[LanceCorruptFileException](Seq((5, 0L, 1L, 42, "_blobs/x.blob")))
    assert(base.contains("base path 42"), base)
    val escape = failure[LanceCorruptFileException](Seq((4, 0L, 1L, 0, "../outside.blob")))
    assert(escape.contains("../outside.blob"), escape)
  }

  test("external URIs no FileIO can read fail as unsupported, naming the column and URI") {
    val mem = failure[LanceUnsupportedException](Seq((3, 0L, 1L, 0, "memory://bucket/x.bin")))
    assert(mem.contains("memory://bucket/x.bin") && mem.contains("'b'"), mem)
    val scheme =
      failure[LanceUnsupportedException](Seq((3, 0L, 1L, 0, "nosuchscheme://bucket/x.bin")))
    assert(scheme.contains("nosuchscheme://bucket/x.bin") && scheme.contains("'b'"), scheme)
  }

  test("more than 2 GiB of blobs in one batch fails before reading, pointing at batch_size") {
    val rec = new RecordingFileIO()
    val rows = Seq.fill(2100)((0, 0L, content.length.toLong, 0, ""))
    val e = intercept[LanceUnsupportedException](new BlobBytes(rec, fragment).materialize(
      v2Field,
      v2(rows)
    ))
    assert(e.getMessage.contains("batch_size"), e.getMessage)
    assert(rec.rangedReads.isEmpty)
  }
}
