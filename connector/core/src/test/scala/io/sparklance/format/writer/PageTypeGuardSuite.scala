package io.sparklance.format.writer

import java.io.ByteArrayOutputStream

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceCorruptFileException
import io.sparklance.format._
import io.sparklance.storage.StreamSink

/**
 * [[PageTypeGuard]] refuses pages pylance would not decode as their column's type, and lets
 * the writer's own pages through. The wrong pages are real ones: what the writer wrote for a
 * dictionary column before it knew dictionaries (plain string pages), which made pylance fail
 * on the whole table (`Expected 1 buffers in array of type Dictionary(Int32, Utf8), got 2`).
 */
class PageTypeGuardSuite extends AnyFunSuite {
  import WriterTestSchemas._

  private def strings(values: Seq[String]): VarBinaryArray = {
    val bytes = values.map(v => if (v == null) Array.emptyByteArray else v.getBytes("UTF-8"))
    new VarBinaryArray(
      values.size,
      values.map(_ == null).toArray,
      bytes.scanLeft(0)(_ + _.length).toArray,
      bytes.flatten.toArray
    )
  }

  private val values = strings((0 until 500).map(i => if (i % 9 == 0) null else s"v${i % 6}"))

  /** The pages a one-column writer of `f` writes for `a`: encodings and buffer counts. */
  private def pagesOf(
      f: LanceField,
      version: FileVersion,
      a: ColumnArray
  ): Seq[(com.google.protobuf.Message, Int)] = {
    val container = new ContainerWriter(new StreamSink(new ByteArrayOutputStream()), version, 1)
    if (version.structural) {
      val w = new StructuralLeafWriter(
        0,
        LeafPath.leaves(f).head,
        version,
        container,
        1 << 20,
        EncodingParams.of(f, f)
      )
      w.append(a); w.finish()
    } else {
      val w = V20ColumnWriter(f, 0, container, 1 << 20)
      w.append(a); w.finish()
    }
    container.pagesOf(0)
  }

  private def dict(key: LogicalType) =
    field(3, "d", LogicalType.Dictionary(LogicalType.Utf8, key, ordered = false))

  for (version <- FileVersion.all) {
    test(s"${version.name}: plain string pages in a dictionary column are refused, naming file, " +
      "column, page and both types") {
      // Distinct values, so that the string writer picks no dictionary of its own.
      val distinct = strings((0 until 500).map(i => if (i % 9 == 0) null else s"value-$i"))
      val plain = pagesOf(field(3, "d", LogicalType.Utf8), version, distinct)
      val e = intercept[LanceCorruptFileException] {
        PageTypeGuard.check("data/x.lance", version, Seq(dict(LogicalType.Int32)), _ => plain)
      }
      val m = e.getMessage
      assert(
        m.contains("data/x.lance") && m.contains("column 'd'") && m.contains("(field 3)") &&
          m.contains("dict:string:int32:false") && m.contains("page 0") &&
          m.contains("not a dictionary page with 32-bit keys"),
        m
      )
    }

    test(s"${version.name}: dictionary pages pass with their own key width only") {
      for (key <- Seq(LogicalType.Int8, LogicalType.UInt8, LogicalType.Int16, LogicalType.Int32)) {
        val pages = pagesOf(dict(key), version, values)
        PageTypeGuard.check("f", version, Seq(dict(key)), _ => pages)
        val other = if (key == LogicalType.Int32) LogicalType.Int16 else LogicalType.Int32
        val e = intercept[LanceCorruptFileException] {
          PageTypeGuard.check("f", version, Seq(dict(other)), _ => pages)
        }
        assert(e.getMessage.contains("-bit keys"), e.getMessage)
      }
    }

    test(s"${version.name}: a null column holds pages of nulls only") {
      val nullField = field(1, "z", LogicalType.Null)
      val nulls = pagesOf(nullField, version, new NullArray(300))
      PageTypeGuard.check("f", version, Seq(nullField), _ => nulls)
      val ints = pagesOf(
        field(1, "z", LogicalType.Int32),
        version,
        new FixedWidthArray(3, null, 4, new Array[Byte](12))
      )
      intercept[LanceCorruptFileException] {
        PageTypeGuard.check("f", version, Seq(nullField), _ => ints)
      }
    }

    test(s"${version.name}: a string column's own dictionary pages pass") {
      val f = field(0, "s", LogicalType.Utf8)
      val pages = pagesOf(f, version, values)
      PageTypeGuard.check("f", version, Seq(f), _ => pages)
    }
  }

  test("the file writer runs the guard: a dictionary column written in full passes it") {
    for (version <- FileVersion.all) {
      val w = new LanceFileWriter(
        new StreamSink(new ByteArrayOutputStream()),
        Seq(dict(LogicalType.Int8)),
        version,
        name = "mem.lance"
      )
      w.write(Array(values))
      assert(w.finish().numRows == 500)
    }
  }
}
