package io.sparklance.format.writer

import java.io.FileOutputStream

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceUnsupportedException
import io.sparklance.format._
import io.sparklance.storage.{HadoopFileIO, StreamSink}
import io.sparklance.testutil.{CanonicalJson, TempDirs}

/**
 * Packed struct columns ([[PackedStructs]], [[V20PackedStructWriter]], [[PackedStructChunks]]):
 * the row-wise packing itself, the column layout (one column under the struct's id), and a
 * round trip through our reader at every version with page budgets small enough for many
 * pages and chunks. pylance's reading and page-by-page agreement with its own writer are
 * checked in tests/write/test_write_packed.py.
 */
class PackedStructsSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()
  private val packedMeta = Map(PackedStructs.Key -> "true".getBytes("UTF-8"))

  private def packedField(id: Int, kids: (String, LogicalType)*): LanceField =
    LanceField(
      id,
      -1,
      "p",
      LogicalType.Struct,
      nullable = true,
      packedMeta,
      kids.zipWithIndex.map { case ((n, t), k) =>
        LanceField(id + 1 + k, id, n, t, nullable = true, Map.empty, Nil)
      }
    )

  private def le(n: Int, width: Int, f: Int => Long): Array[Byte] = {
    val a = new Array[Byte](n * width)
    for (i <- 0 until n; b <- 0 until width) a(i * width + b) = (f(i) >>> (8 * b)).toByte
    a
  }

  test("rows are packed child after child, null structs as zeros") {
    val f = packedField(0, "a" -> LogicalType.Int32, "b" -> LogicalType.Int16)
    val s = new StructArray(
      3,
      Array(false, true, false),
      Array(
        new FixedWidthArray(3, null, 4, le(3, 4, i => 0x01020304L + i)),
        new FixedWidthArray(3, Array(false, true, false), 2, le(3, 2, i => 0x0a0b + i))
      )
    )
    val p = PackedStructs.packFixed(f, PackedStructs.childWidths(f, FileVersion.V2_1), s)
    assert(p.byteWidth == 6 && p.length == 3)
    assert(p.nulls.toSeq == Seq(false, true, false))
    assert(p.data.toSeq == Seq[Byte](4, 3, 2, 1, 0x0b, 0x0a, 0, 0, 0, 0, 0, 0, 6, 3, 2, 1, 0x0d,
      0x0a))
  }

  test(
    "a null child in a valid row, booleans, strings and wide rows are refused naming the column"
  ) {
    val f = packedField(0, "a" -> LogicalType.Int32)
    val s = new StructArray(
      2,
      null,
      Array(new FixedWidthArray(2, Array(false, true), 4, new Array[Byte](8)))
    )
    val e = intercept[LanceUnsupportedException](PackedStructs.pack(f, Array(4), s))
    assert(
      e.getMessage.contains("'p'") && e.getMessage.contains("'a'") && e.getMessage.contains("row 1")
    )
    for (
      (t, v, why) <- Seq(
        (LogicalType.Bool, FileVersion.V2_2, "boolean"),
        (LogicalType.Utf8, FileVersion.V2_1, "variable width")
      )
    ) {
      val e2 =
        intercept[LanceUnsupportedException](PackedStructs.childWidths(packedField(0, "c" -> t), v))
      assert(e2.getMessage.contains("'p'") && e2.getMessage.contains(why), e2.getMessage)
    }
    val wide = packedField(
      0,
      (0 until 16).map(i => s"d$i" -> (LogicalType.Decimal(128, 20, 0): LogicalType)): _*
    )
    assert(PackedStructs.childWidths(wide, FileVersion.V2_0).sum == 256)
    intercept[LanceUnsupportedException](PackedStructs.childWidths(wide, FileVersion.V2_1))
  }

  test("2.2 packs string children: widths, then rows of fixed bytes and length-prefixed values") {
    val f = packedField(
      0,
      "a" -> LogicalType.Int16,
      "s" -> LogicalType.Utf8,
      "l" -> LogicalType.LargeBinary
    )
    val widths = PackedStructs.childWidths(f, FileVersion.V2_2)
    assert(widths.toSeq == Seq(2, -4, -8) && PackedStructs.isVariable(widths))
    val s = new StructArray(
      3,
      Array(false, true, false),
      Array(
        new FixedWidthArray(3, null, 2, le(3, 2, i => 0x0102 + i)),
        new VarBinaryArray(3, null, Array(0, 2, 2, 3), "hiz".getBytes("UTF-8")),
        new VarBinaryArray(3, null, Array(0, 0, 0, 1), Array[Byte](9))
      )
    )
    val rows = PackedStructs.pack(f, widths, s).asInstanceOf[VarBinaryArray]
    assert(rows.offsets.toSeq == Seq(0, 16, 16, 32))
    assert(rows.data.toSeq == Seq[Byte](2, 1, 2, 0, 0, 0, 'h', 'i', 0, 0, 0, 0, 0, 0, 0, 0,
      4, 1, 1, 0, 0, 0, 'z', 1, 0, 0, 0, 0, 0, 0, 0, 9))
  }

  test("only truthy values of a struct's packed key pack it") {
    def withMeta(k: String, v: String) =
      packedField(0, "a" -> LogicalType.Int32).copy(metadata = Map(k -> v.getBytes("UTF-8")))
    assert(PackedStructs.isPacked(withMeta(PackedStructs.Key, "TRUE")))
    assert(PackedStructs.isPacked(withMeta(PackedStructs.LegacyKey, "yes")))
    assert(!PackedStructs.isPacked(withMeta(PackedStructs.Key, "false")))
    val int = LanceField(0, -1, "v", LogicalType.Int32, nullable = true, packedMeta, Nil)
    assert(!PackedStructs.isPacked(int))
    assert(PackedStructs.columnFields(packedField(
      3,
      "a" -> LogicalType.Int32,
      "b" -> LogicalType.Int64
    )).map(_.id) == Seq(3))
  }

  for (version <- FileVersion.all)
    test(s"${version.name}: packed columns round-trip through our reader, one column each") {
      val n = 5000
      val p = packedField(
        1,
        "a" -> LogicalType.Int32,
        "b" -> LogicalType.Float64,
        "c" -> LogicalType.Decimal(128, 12, 3),
        "d" -> LogicalType.Int8
      )
      val id = LanceField(0, -1, "id", LogicalType.Int64, nullable = false, Map.empty, Nil)
      val fields = Seq(id, p)
      val structNulls = if (version.structural) Array.tabulate(n)(_ % 9 == 4) else null
      val kids: Array[ColumnArray] = Array(
        new FixedWidthArray(n, null, 4, le(n, 4, i => i * 31L - 7)),
        new FixedWidthArray(n, null, 8, le(n, 8, i => java.lang.Double.doubleToLongBits(i / 3.0))),
        new FixedWidthArray(n, null, 16, le(n, 16, i => if (i % 2 == 0) i.toLong else -i.toLong)),
        new FixedWidthArray(n, null, 1, le(n, 1, i => i % 256))
      )
      val batch: Array[ColumnArray] = Array(
        new FixedWidthArray(n, null, 8, le(n, 8, _.toLong)),
        new StructArray(n, structNulls, kids)
      )
      val path = TempDirs.create("lance-packed-").resolve("f.lance").toString
      val w = new LanceFileWriter(
        new StreamSink(new FileOutputStream(path)),
        fields,
        version,
        FileWriterOptions(16 * 1024)
      )
      w.write(batch); w.write(batch)
      val written =
        try w.finish()
        finally w.close()
      assert(written.fieldIds.toSeq == Seq(0, 1))
      val r = LanceFileReader.open(
        io,
        path,
        version.major,
        version.minor,
        FileFields(written.fieldIds, written.columnIndices)
      )
      try {
        val got = r.scan(fields, 0, 2 * n).next(2 * n)
        for (row <- 0 until 2 * n; c <- fields.indices) {
          val e = CanonicalJson.value(fields(c), batch(c), row % n);
          val g = CanonicalJson.value(fields(c), got(c), row)
          assert(
            CanonicalJson.same(e, g),
            s"${version.name} row $row column ${fields(c).name}: expected $e, got $g"
          )
        }
      } finally r.close()
    }
}
