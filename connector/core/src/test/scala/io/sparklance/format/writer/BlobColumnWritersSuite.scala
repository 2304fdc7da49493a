package io.sparklance.format.writer

import java.io.FileOutputStream
import java.nio.file.{Files, Path => JPath}

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.format.blob._
import io.sparklance.storage.{HadoopFileIO, OutputSink, StreamSink}
import io.sparklance.testutil.TempDirs

/**
 * Blob columns written by [[LanceFileWriter]] ([[StructuralBlobWriter]], [[V20BlobWriter]]) and
 * read back through our reader: every row's descriptor resolves (data file or sidecar, as
 * [[BlobPaths]] names it) to exactly the bytes written, nulls stay null, and values are placed
 * by the thresholds. Tiny page budgets force many pages. pylance's reading of the same files is
 * checked in tests/write/test_write_blobs.py.
 */
class BlobColumnWritersSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()
  private val utf8 = (s: String) => s.getBytes("UTF-8")

  private def v1Field(id: Int, parent: Int = -1): LanceField =
    LanceField(
      id,
      parent,
      "b",
      LogicalType.LargeBinary,
      nullable = true,
      Map(BlobColumn.BlobMetaKey -> utf8("true")),
      Nil
    )

  private def v2Field(
      id: Int,
      meta: Map[String, String] = Map.empty,
      parent: Int = -1
  ): LanceField =
    LanceField(
      id,
      parent,
      "b",
      LogicalType.Struct,
      nullable = true,
      meta.map { case (k, v) => k -> utf8(v) } + (BlobColumn.ExtensionNameKey -> utf8(
        BlobColumn.V2ExtensionName
      )),
      Seq(
        LanceField(id + 1, id, "data", LogicalType.LargeBinary, nullable = true, Map.empty, Nil),
        LanceField(id + 2, id, "uri", LogicalType.Utf8, nullable = true, Map.empty, Nil)
      )
    )

  /** Deterministic values: null every 7th, empty every 5th, else sizes cycling through `sizes`. */
  private def values(n: Int, sizes: Seq[Int], seed: Int): Seq[Array[Byte]] = {
    val rnd = new scala.util.Random(seed)
    (0 until n).map { i =>
      if (i % 7 == 3) null
      else if (i % 5 == 1) Array.emptyByteArray
      else { val a = new Array[Byte](sizes(i % sizes.size)); rnd.nextBytes(a); a }
    }
  }

  private def binary(vals: Seq[Array[Byte]]): VarBinaryArray = {
    val offsets = vals.scanLeft(0)((o, v) => o + (if (v == null) 0 else v.length)).toArray
    val data = new Array[Byte](offsets.last)
    vals.zipWithIndex.foreach { case (v, i) =>
      if (v != null) System.arraycopy(v, 0, data, offsets(i), v.length)
    }
    val nulls = if (vals.contains(null)) vals.map(_ == null).toArray else null
    new VarBinaryArray(vals.size, nulls, offsets, data)
  }

  /** Writes `batches` (one column array per field each), returns the file path and the reader's view of every column. */
  private def write(
      fields: Seq[LanceField],
      version: FileVersion,
      batches: Seq[Array[ColumnArray]],
      budget: Long
  ): (String, Array[ColumnArray]) = {
    val dir = TempDirs.create("lance-blob-writer-")
    val path = dir.resolve("f.lance").toString
    val sidecars = new BlobSidecars {
      def create(blobId: Int): OutputSink = new StreamSink(new FileOutputStream({
        val p = BlobPaths.sidecar(path, blobId); Files.createDirectories(JPath.of(p).getParent); p
      }))
    }
    val w = new LanceFileWriter(
      new StreamSink(new FileOutputStream(path)),
      fields,
      version,
      FileWriterOptions(budget),
      sidecars
    )
    batches.foreach(w.write)
    val written =
      try w.finish()
      finally w.close()
    val total = batches.map(_(0).length).sum
    val r = LanceFileReader.open(
      io,
      path,
      version.major,
      version.minor,
      FileFields(written.fieldIds, written.columnIndices)
    )
    try { (path, r.scan(fields, 0, total).next(total)) }
    finally r.close()
  }

  /** The bytes of each row as its descriptor says (null for null rows). */
  private def resolve(path: String, f: LanceField, column: ColumnArray): Seq[Array[Byte]] = {
    val v = BlobColumn.version(f).get
    val d = BlobDescriptors.of(column, v, f.name)
    (0 until d.length).map { i =>
      if (d.isNull(i)) null
      else {
        val kind = if (v == BlobColumn.V1) BlobKind.Inline else d.kinds(i)
        val src = kind match {
          case BlobKind.Inline => path
          case BlobKind.Packed | BlobKind.Dedicated => BlobPaths.sidecar(path, d.blobIds(i))
          case k => fail(s"row $i: unexpected kind $k")
        }
        if (kind == BlobKind.Dedicated)
          assert(d.positions(i) == 0 && d.sizes(i) == new java.io.File(src).length())
        io.readRange(src, d.positions(i), d.sizes(i).toInt)
      }
    }
  }

  private def assertBytes(want: Seq[Array[Byte]], got: Seq[Array[Byte]]): Unit = {
    assert(got.size == want.size)
    want.zip(got).zipWithIndex.foreach { case ((w, g), i) =>
      if (w == null) assert(g == null, s"row $i should be null")
      else assert(
        g != null && java.util.Arrays.equals(w, g),
        s"row $i: ${if (g == null) "null" else g.length + " bytes"}, want ${w.length}"
      )
    }
  }

  for (version <- FileVersion.all)
    test(s"${version.name}: bytes of every row come back, many pages") {
      val f = if (version.minor >= 2) v2Field(1) else v1Field(1)
      val id = LanceField(0, -1, "id", LogicalType.Int64, nullable = false, Map.empty, Nil)
      val parts = Seq(
        values(300, Seq(1, 10, 3000, 100000), 1),
        values(5, Seq(70000), 2),
        values(400, Seq(7), 3)
      )
      val batches = parts.zipWithIndex.map { case (p, k) =>
        Array[ColumnArray](
          new FixedWidthArray(p.size, null, 8, new Array[Byte](8 * p.size)),
          binary(p)
        )
      }
      val (path, cols) = write(Seq(id, f), version, batches, budget = 512)
      assertBytes(parts.flatten, resolve(path, f, cols(1)))
    }

  test("2.2: values are inline, packed or dedicated by the thresholds; ids count from 1 per file") {
    val f = v2Field(
      0,
      Map(
        BlobThresholds.InlineKey -> "16",
        BlobThresholds.DedicatedKey -> "1000",
        BlobThresholds.PackFileKey -> "2000"
      )
    )
    val sizes = Seq(16, 17, 1000, 1001, 900, 900, 900, 5)
    val vals = sizes.zipWithIndex.map { case (s, i) => Array.fill[Byte](s)(i.toByte) }
    val (path, cols) =
      write(Seq(f), FileVersion.V2_2, Seq(Array[ColumnArray](binary(vals))), budget = 1 << 20)
    val d = BlobDescriptors.of(cols(0), BlobColumn.V2, "b")
    assert(d.kinds.toSeq == Seq(
      BlobKind.Inline,
      BlobKind.Packed,
      BlobKind.Packed,
      BlobKind.Dedicated,
      BlobKind.Packed,
      BlobKind.Packed,
      BlobKind.Packed,
      BlobKind.Inline
    ))
    // Pack 1 holds 17 + 1000 + 900 bytes; the dedicated value takes id 2; the next 900 would pass
    // 2000 bytes, so pack 3 starts, and the last 900 fits there.
    assert(d.blobIds.toSeq == Seq(0, 1, 1, 2, 1, 3, 3, 0))
    assert(d.positions.toSeq.slice(1, 3) == Seq(0L, 17L) && d.positions(4) == 1017L && d.positions(
      6
    ) == 900L)
    assert(new java.io.File(BlobPaths.sidecar(path, 1)).length() == 1917)
    assert(new java.io.File(BlobPaths.sidecar(path, 3)).length() == 1800)
    assertBytes(vals, resolve(path, f, cols(0)))
  }

  for (version <- Seq(FileVersion.V2_1, FileVersion.V2_2))
    test(s"${version.name}: a blob inside a nullable struct keeps struct and value nulls apart") {
      val b = if (version.minor >= 2) v2Field(2, parent = 0) else v1Field(2, parent = 0)
      val x = LanceField(1, 0, "x", LogicalType.Int32, nullable = true, Map.empty, Nil)
      val s = LanceField(0, -1, "s", LogicalType.Struct, nullable = true, Map.empty, Seq(x, b))
      val vals = values(50, Seq(3, 70000), 4)
      val structNull = (0 until 50).map(i => i % 4 == 2).toArray
      val st = new StructArray(
        50,
        structNull,
        Array(new FixedWidthArray(50, null, 4, new Array[Byte](200)), binary(vals))
      )
      val (path, cols) = write(Seq(s), version, Seq(Array[ColumnArray](st)), budget = 256)
      val got = cols(0).asInstanceOf[StructArray]
      (0 until 50).foreach(i => assert(got.isNull(i) == structNull(i), s"row $i"))
      val bytes = resolve(path, b, got.children(1))
      assertBytes(vals.zipWithIndex.map { case (v, i) => if (structNull(i)) null else v }, bytes)
    }

  test(
    "2.2: a page of null rows only is a constant page; the data file's schema lists the descriptor struct"
  ) {
    val f = v2Field(0)
    val (path, cols) = write(
      Seq(f),
      FileVersion.V2_2,
      Seq(Array[ColumnArray](binary(Seq.fill(9)(null)))),
      budget = 1 << 20
    )
    assert((0 until 9).forall(cols(0).isNull))
    val c = FileContainer.open(io.open(path))
    val fileSchema = c.descriptor.getSchema.getFieldsList
    assert(fileSchema.size == 6 && fileSchema.get(0).getLogicalType == "struct" &&
      fileSchema.get(0).getMetadataMap.containsKey("lance-encoding:packed") && fileSchema.get(
        1
      ).getId == -1)
  }

  test("a bad threshold fails naming the column and key") {
    val f = v2Field(0, Map(BlobThresholds.DedicatedKey -> "0"))
    val e = intercept[_root_.io.sparklance.LanceException](write(
      Seq(f),
      FileVersion.V2_2,
      Seq(Array[ColumnArray](binary(Seq(Array[Byte](1))))),
      1 << 20
    ))
    assert(e.getMessage.contains("'b'") && e.getMessage.contains(BlobThresholds.DedicatedKey))
  }
}
