package io.sparklance.format.writer

import java.io.FileOutputStream

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.storage.{HadoopFileIO, StreamSink}
import io.sparklance.testutil.{CanonicalJson, DefaultLineOnly, TempDirs}

import scala.jdk.CollectionConverters._

/**
 * Files written by [[LanceFileWriter]] read back, value for value, through our reader (which
 * the fixture suites verify against pylance). Small page budgets force many pages and chunks;
 * pylance's own checks of what we write are in tests/write (pytest).
 */
@DefaultLineOnly
class FileWriterRoundTripSuite extends AnyFunSuite {
  import WriterTestSchemas._

  private val io = HadoopFileIO.local()

  private def pageKinds(path: String): Seq[String] = PageKinds(io, path)

  private def roundTrip(
      fields: Seq[LanceField],
      version: FileVersion,
      batches: Seq[Array[ColumnArray]],
      budget: Long
  ): String = {
    val path = TempDirs.create("lance-writer-").resolve("f.lance").toString
    val w = new LanceFileWriter(
      new StreamSink(new FileOutputStream(path)),
      fields,
      version,
      FileWriterOptions(budget)
    )
    val t0 = System.nanoTime()
    batches.foreach(w.write)
    val written =
      try w.finish()
      finally w.close()
    val t1 = System.nanoTime()
    val total = batches.map(_(0).length).sum
    assert(written.numRows == total)
    assert(written.sizeBytes == new java.io.File(path).length())
    val r = LanceFileReader.open(
      io,
      path,
      version.major,
      version.minor,
      FileFields(written.fieldIds, written.columnIndices)
    )
    try {
      assert(r.numRows == total)
      // Read back in batches that do not line up with the written ones.
      val scan = r.scan(fields, 0, total)
      val expected = batches.flatMap(b =>
        (0 until b(0).length).map(i =>
          fields.zip(b).map { case (f, a) => CanonicalJson.value(f, a, i) }.toIndexedSeq
        )
      ).toIndexedSeq
      var row = 0
      while (row < total) {
        val n = math.min(777, total - row)
        val got = scan.next(n)
        (0 until n).foreach { i =>
          fields.zip(got).zipWithIndex.foreach { case ((f, a), c) =>
            val e = expected(row + i)(c); val g = CanonicalJson.value(f, a, i)
            assert(
              CanonicalJson.same(e, g),
              s"${version.name} row ${row + i} column '${f.name}': expected $e, got $g"
            )
          }
        }
        row += n
      }
      info(
        f"write ${(t1 - t0) / 1e9}%.2fs, read+compare ${(System.nanoTime() - t1) / 1e9}%.2fs, ${written.sizeBytes} bytes"
      )
    } finally r.close()
    path
  }

  private def batches(
      fields: Seq[LanceField],
      seed: Long,
      sizes: Seq[Int],
      nullRate: Double,
      nullStructs: Boolean,
      style: RandomArrays.Style = RandomArrays.Random
  ): Seq[Array[ColumnArray]] = {
    val g = new RandomArrays(seed, nullRate, nullStructs, style)
    sizes.map(n => fields.map(f => g.array(f, n)).toArray)
  }

  // Low-cardinality, run-heavy and constant values take the dictionary, RLE and constant-page
  // paths (and FSST for the long strings); every type, nested or not, with and without nulls.
  for (
    version <- FileVersion.all;
    style <- Seq(RandomArrays.LowCard, RandomArrays.Runs, RandomArrays.Constant);
    nullRate <- Seq(0.0, 0.3)
  ) {
    test(s"${version.name}: every type, $style values, null rate $nullRate") {
      val fields = forVersion(version)
      roundTrip(
        fields,
        version,
        batches(fields, 23, Seq(700, 4000, 3), nullRate, nullStructs = version.structural, style),
        24 * 1024
      )
      val path = roundTrip(
        fields,
        version,
        batches(fields, 29, Seq(6000), nullRate, nullStructs = version.structural, style),
        8L * 1024 * 1024
      )
      if (version.structural) {
        // The encodings meant for these values were actually used.
        val kinds = pageKinds(path)
        val expected = (style, version) match {
          case (RandomArrays.LowCard, _) => Seq("mini/inline_bitpacking+dict")
          case (RandomArrays.Runs, _) => Seq("mini/rle")
          case (RandomArrays.Constant, FileVersion.V2_2) => Seq("const/value")
          case (RandomArrays.Constant, _) => Seq("mini/rle", "mini/inline_bitpacking+dict")
          case _ => Nil
        }
        expected.foreach(k =>
          assert(kinds.contains(k), s"no $k page among ${kinds.distinct.sorted}")
        )
      }
    }
  }

  for (
    version <- FileVersion.all;
    (key, value) <- Seq(
      "lance-encoding:compression" -> "zstd",
      "lance-encoding:compression" -> "lz4",
      "lance-encoding:compression" -> "none",
      "lance-encoding:compression" -> "fsst",
      "lance-encoding:structural-encoding" -> "fullzip",
      "lance-encoding:structural-encoding" -> "miniblock"
    )
  ) {
    test(s"${version.name}: field metadata $key=$value on every column") {
      val md = Predef.Map(key -> value.getBytes("UTF-8"))
      def tag(f: LanceField): LanceField = f.copy(metadata = md, children = f.children.map(tag))
      val fields = forVersion(version).map(tag)
      for (style <- Seq(RandomArrays.Random, RandomArrays.LowCard))
        roundTrip(
          fields,
          version,
          batches(fields, 31, Seq(2500, 1500), 0.2, nullStructs = version.structural, style),
          1 << 20
        )
    }
  }

  test(
    "2.1/2.2: text strings are FSST-compressed in mini-block and full-zip pages, with nulls and lists"
  ) {
    val fields = build(Seq(
      Node("short", LogicalType.Utf8),
      Node("long", LogicalType.LargeUtf8),
      Node("l", LogicalType.List, children = Seq(Node("item", LogicalType.Utf8)))
    ))
    val r = new scala.util.Random(9)
    val words =
      Array("alpha", "beta", "gamma", "delta", "lance", "spark", "file", "page", " ", ", ", "-")
    def text(n: Int, words0: Int, nullEvery: Int): VarBinaryArray = {
      val strs = Array.fill(n)((0 until words0 + r.nextInt(words0 + 1)).map(_ =>
        words(r.nextInt(words.length))
      ).mkString + r.nextInt(1000))
      val offsets = strs.scanLeft(0)(_ + _.length)
      new VarBinaryArray(
        n,
        Array.tabulate(n)(_ % nullEvery == 0),
        offsets,
        strs.mkString.getBytes("UTF-8")
      )
    }
    val n = 8000
    val items = text(3 * n, 2, 9)
    val lists =
      new ListArray(n, Array.tabulate(n)(_ % 17 == 0), Array.tabulate(n + 1)(i => 3 * i), items)
    for (v <- Seq(FileVersion.V2_1, FileVersion.V2_2)) {
      val path =
        roundTrip(fields, v, Seq(Array(text(n, 3, 7), text(n, 80, 5), lists)), 8L * 1024 * 1024)
      val kinds = pageKinds(path)
      assert(kinds == Seq("mini/fsst", "zip/fsst", "mini/fsst"), kinds)
    }
  }

  test("2.1/2.2: nullable wide vectors (null rows and null items) in full-zip pages") {
    val fields = Seq(
      field(0, "v", LogicalType.FixedSizeList(LogicalType.Float32, 100)),
      field(1, "w", LogicalType.FixedSizeList(LogicalType.Int64, 64))
    )
    val n = 3000
    val r = new scala.util.Random(5)
    def vecs(dim: Int, width: Int) = {
      val data = Array.fill(n * dim * width)(r.nextInt(256).toByte)
      new FixedSizeListArray(
        n,
        Array.tabulate(n)(_ % 11 == 0),
        dim,
        new FixedWidthArray(n * dim, Array.tabulate(n * dim)(i => i % 13 == 0), width, data)
      )
    }
    for (v <- Seq(FileVersion.V2_1, FileVersion.V2_2))
      roundTrip(fields, v, Seq(Array(vecs(100, 4), vecs(64, 8))), 256 * 1024)
  }

  for (version <- FileVersion.all; nullRate <- Seq(0.0, 0.2, 1.0)) {
    test(s"${version.name}: every type, null rate $nullRate, many pages and chunks") {
      val fields = forVersion(version)
      roundTrip(
        fields,
        version,
        batches(fields, 7, Seq(1, 500, 3000, 10, 5000), nullRate, nullStructs = version.structural),
        16 * 1024
      )
    }
  }

  for (version <- FileVersion.all.filter(_.structural)) {
    test(s"${version.name}: a file that takes over the previous file's page buffers is the " +
      "same file, byte for byte") {
      val fields = forVersion(version)
      val dir = TempDirs.create("lance-writer-reuse-")
      def write(name: String, bs: Seq[Array[ColumnArray]], previous: LanceFileWriter) = {
        val path = dir.resolve(name).toString
        val w = new LanceFileWriter(
          new StreamSink(new FileOutputStream(path)),
          fields,
          version,
          FileWriterOptions(16 * 1024),
          previous = previous
        )
        bs.foreach(w.write)
        try w.finish()
        finally w.close()
        (w, java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(path)))
      }
      // The first file ends on a part-filled page; the second has other values and nulls.
      val first = batches(fields, 41, Seq(3000, 1234), 0.3, nullStructs = true)
      val second = batches(fields, 43, Seq(2500, 17), 0.1, nullStructs = true)
      val (w1, a) = write("a.lance", first, null)
      val (w2, b) = write("b.lance", second, w1)
      val third = batches(fields, 47, Seq(800), 0.5, nullStructs = true)
      val (w3, c) = write("c.lance", third, w2)
      // The buffers were taken over, not made anew...
      assert(w1.pageBuffers.nonEmpty)
      assert(w2.pageBuffers.zip(w1.pageBuffers).forall { case (x, y) => x eq y })
      assert(w3.pageBuffers.zip(w1.pageBuffers).forall { case (x, y) => x eq y })
      // ...and the files are what fresh writers write.
      assert(a.sameElements(write("a2.lance", first, null)._2))
      assert(b.sameElements(write("b2.lance", second, null)._2))
      assert(c.sameElements(write("c2.lance", third, null)._2))
    }
  }

  for (version <- FileVersion.all) {
    test(s"${version.name}: one big page per column") {
      val fields = forVersion(version)
      roundTrip(
        fields,
        version,
        batches(fields, 11, Seq(9000), 0.1, nullStructs = version.structural),
        64L * 1024 * 1024
      )
    }
  }

  test("2.2: a column that is one value repeated, and an all-null column") {
    val fields = Seq(field(0, "c", LogicalType.Int32), field(1, "n", LogicalType.Utf8))
    val n = 5000
    val c = new FixedWidthArray(n, null, 4, Array.fill(n)(Array[Byte](7, 0, 0, 0)).flatten)
    val s = new VarBinaryArray(n, Array.fill(n)(true), new Array[Int](n + 1), Array.emptyByteArray)
    FileVersion.all.foreach(v => roundTrip(fields, v, Seq(Array(c, s)), 1 << 20))
  }

  test("2.1/2.2: dictionary entries that differ only in their last or high bytes stay apart") {
    // Strings of 1 to 24 bytes that share a prefix and differ in their last byte, or only in
    // trailing NUL bytes (one word or two words as keys, or bytes in place); 64- and 128-bit
    // values that differ only in their high bytes. Few of each, repeated: dictionary pages.
    val fields = Seq(
      field(0, "s", LogicalType.Utf8),
      field(1, "l", LogicalType.Int64),
      field(2, "d", LogicalType.Decimal(128, 38, 0))
    )
    val prefix = "Clerk#0000000000000000000".getBytes("UTF-8")
    val distinct = (1 to 24).flatMap { len =>
      Seq(
        prefix.take(len),
        prefix.take(len - 1) :+ '7'.toByte,
        prefix.take(len - 1) :+ 0.toByte,
        prefix.take(len) :+ 0.toByte,
        prefix.take(len) ++ Array[Byte](0, 0)
      )
    }.map(_.toSeq).distinct.map(_.toArray)
    val n = 12000
    val r = new scala.util.Random(5)
    val picks = Array.fill(n)(r.nextInt(distinct.size))
    val strs = picks.map(distinct(_))
    val s = new VarBinaryArray(
      n,
      Array.tabulate(n)(_ % 11 == 0),
      strs.scanLeft(0)(_ + _.length),
      strs.flatten
    )
    val l = new Array[Byte](8 * n); val d = new Array[Byte](16 * n)
    (0 until n).foreach { i =>
      val k = picks(i) % 40
      codec.LittleEndian.putI64(l, 8 * i, (k.toLong << 56) | (k.toLong << 48) | 12345L)
      codec.LittleEndian.putI64(d, 16 * i, 99L)
      codec.LittleEndian.putI64(d, 16 * i + 8, (k % 20).toLong << 40)
    }
    val columns =
      Array[ColumnArray](s, new FixedWidthArray(n, null, 8, l), new FixedWidthArray(n, null, 16, d))
    for (v <- Seq(FileVersion.V2_1, FileVersion.V2_2)) {
      val path = roundTrip(fields, v, Seq(columns), 8L * 1024 * 1024)
      val dictPages = pageKinds(path).count(_.endsWith("+dict"))
      // Strings and 128-bit values in both versions, 64-bit ones in 2.2.
      assert(dictPages == (if (v == FileVersion.V2_2) 3 else 2), pageKinds(path))
    }
  }

  test("2.1/2.2: small integers are bitpacked (file far smaller than flat) and read back exactly") {
    val fields = Seq(
      field(0, "small", LogicalType.Int64, nullable = false),
      field(1, "neg", LogicalType.Int32)
    )
    val n = 10000
    val r = new scala.util.Random(3)
    val small = new Array[Byte](8 * n); val neg = new Array[Byte](4 * n)
    (0 until n).foreach { i =>
      codec.LittleEndian.putI64(small, 8 * i, r.nextInt(1000));
      codec.LittleEndian.putI32(neg, 4 * i, -r.nextInt(5))
    }
    val negNulls = Array.tabulate(n)(_ % 7 == 0)
    for (v <- Seq(FileVersion.V2_1, FileVersion.V2_2)) {
      val path = TempDirs.create("lance-writer-").resolve("f.lance").toString
      val w = new LanceFileWriter(new StreamSink(new FileOutputStream(path)), fields, v)
      w.write(Array(
        new FixedWidthArray(n, null, 8, small),
        new FixedWidthArray(n, negNulls, 4, neg)
      ))
      val written =
        try w.finish()
        finally w.close()
      // 10 bits instead of 64 for the first column; the negative one stays flat.
      assert(
        written.sizeBytes < 8L * n * 3 / 10 + 4L * n + 8192,
        s"${v.name}: ${written.sizeBytes} bytes"
      )
      roundTrip(
        fields,
        v,
        Seq(Array(
          new FixedWidthArray(n, null, 8, small),
          new FixedWidthArray(n, negNulls, 4, neg)
        )),
        1 << 20
      )
    }
  }

  test("2.0 refuses null structs and maps with a clear error") {
    val f = Seq(LanceField(
      0,
      -1,
      "s",
      LogicalType.Struct,
      nullable = true,
      Map.empty,
      Seq(field(1, "x", LogicalType.Int32).copy(parentId = 0))
    ))
    val a = new StructArray(
      2,
      Array(false, true),
      Array(new FixedWidthArray(2, null, 4, new Array[Byte](8)))
    )
    val path = TempDirs.create("lance-writer-").resolve("f.lance").toString
    val w = new LanceFileWriter(new StreamSink(new FileOutputStream(path)), f, FileVersion.V2_0)
    val e = intercept[_root_.io.sparklance.LanceUnsupportedException](w.write(Array(a)))
    assert(e.getMessage.contains("'s'") && e.getMessage.contains("2.1"))
    w.close()
  }
}

object WriterTestSchemas {
  import LogicalType._

  def field(id: Int, name: String, t: LogicalType, nullable: Boolean = true): LanceField =
    LanceField(id, -1, name, t, nullable, Predef.Map.empty, Nil)

  /** Fields with ids assigned pre-order from `nodes`: (name, type, nullable, children). */
  final case class Node(
      name: String,
      t: LogicalType,
      nullable: Boolean = true,
      children: Seq[Node] = Nil
  )

  def build(nodes: Seq[Node]): Seq[LanceField] = {
    var next = 0
    def go(n: Node, parent: Int): LanceField = {
      val id = next; next += 1
      LanceField(id, parent, n.name, n.t, n.nullable, Predef.Map.empty, n.children.map(go(_, id)))
    }
    nodes.map(go(_, -1))
  }

  val common: Seq[Node] = Seq(
    Node("b", Bool),
    Node("i8", Int8),
    Node("i16", Int16),
    Node("i32", Int32),
    Node("small", Int32, nullable = false),
    Node("i64", Int64),
    Node("u8", UInt8),
    Node("u32", UInt32),
    Node("u64", UInt64),
    Node("h", Float16),
    Node("f", Float32),
    Node("d", Float64),
    Node("s", Utf8),
    Node("ls", LargeUtf8),
    Node("bin", Binary),
    Node("long_s", Utf8),
    Node("long_bin", LargeBinary),
    Node("dec", Decimal(128, 20, 3)),
    Node("dt", Date32),
    Node("ts", Timestamp(TimeUnit.Micro, Some("UTC"))),
    Node("tsn", Timestamp(TimeUnit.Micro, None)),
    Node("fsb", FixedSizeBinary(3)),
    Node("vec", FixedSizeList(Float32, 4)),
    Node("bigvec", FixedSizeList(Float32, 128)),
    Node("l", List, children = Seq(Node("item", Int64))),
    Node("ll", List, children = Seq(Node("item", List, children = Seq(Node("item", Utf8))))),
    Node(
      "st",
      Struct,
      children = Seq(
        Node("x", Int32),
        Node("y", Utf8),
        Node("z", List, children = Seq(Node("item", Float64)))
      )
    ),
    Node(
      "lst",
      ListOfStruct(false),
      children = Seq(Node("item", Struct, children = Seq(Node("a", Int16), Node("b", Utf8))))
    ),
    Node("long_l", List, children = Seq(Node("item", Binary)))
  )

  val mapNode: Node = Node(
    "m",
    Map,
    children = Seq(Node(
      "entries",
      Struct,
      nullable = false,
      children = Seq(Node("key", Utf8, nullable = false), Node("value", Int32))
    ))
  )

  def forVersion(v: FileVersion): Seq[LanceField] =
    build(if (v == FileVersion.V2_2) common :+ mapNode else common)
}
