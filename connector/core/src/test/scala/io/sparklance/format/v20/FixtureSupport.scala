package io.sparklance.format.v20

import java.io.{BufferedReader, File, FileInputStream, InputStreamReader}
import java.nio.charset.StandardCharsets
import java.util.zip.GZIPInputStream

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory, ObjectNode}
import org.apache.hadoop.conf.Configuration

import io.sparklance.format._
import io.sparklance.storage.{HadoopFileIO, Paths}
import io.sparklance.table.{DeletionVector, LanceDataset, Snapshot, VersionSpec}

/**
 * Test support for the format readers: reads a whole dataset version through
 * [[LanceFileReader]] (fragments in manifest order, deleted rows dropped with
 * [[ColumnArrays.take]]) and renders rows in the fixtures' canonical JSON (see
 * src-test-data/generate.py) so they compare with what pylance returned.
 *
 * Fixture enumeration comes from io.sparklance.testutil.Fixtures; values are compared here (see `compare`).
 */
object FixtureSupport {
  val mapper = new ObjectMapper()
  private val nf = JsonNodeFactory.instance

  lazy val io = new HadoopFileIO(new Configuration())

  /** src-test-data of this worktree (or SPARKLANCE_TEST_DATA / -Dsparklance.test.data). */
  lazy val testData: File = {
    val root = new File(sys.props.getOrElse("sparklance.repo.root", "."))
    val candidates = Seq(
      sys.props.get("sparklance.test.data").map(new File(_)),
      sys.env.get("SPARKLANCE_TEST_DATA").map(new File(_)),
      Some(new File(root, "src-test-data"))
    )
    candidates.flatten.find(d => new File(d, "expected").isDirectory).getOrElse(new File(
      root,
      "src-test-data"
    ))
  }

  def repoRoot: File = testData.getParentFile

  def readJson(f: File): JsonNode = mapper.readTree(f)

  def readRows(f: File): IndexedSeq[JsonNode] = {
    val in = new FileInputStream(f)
    val stream = if (f.getName.endsWith(".gz")) new GZIPInputStream(in) else in
    val r = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))
    try Iterator.continually(r.readLine()).takeWhile(_ != null).filter(_.nonEmpty).map(l =>
        mapper.readTree(l)
      ).toIndexedSeq
    finally r.close()
  }

  /** Decoded top-level columns of one dataset version, rows in to_table order. */
  def readVersion(
      root: String,
      version: Long,
      batchRows: Int = 137
  ): (Snapshot, Seq[ColumnArray]) = {
    val ds = LanceDataset.open(io, root)
    val snap = ds.open(VersionSpec.Number(version))
    val fields = snap.schema.fields
    val perFragment = snap.fragments.map { frag =>
      val files = frag.getFilesList.asScala.toSeq
      def open(df: _root_.io.sparklance.proto.TableProtos.DataFile): LanceFileReader =
        LanceFileReader.open(
          io,
          Paths.join(Paths.join(root, "data"), df.getPath),
          df.getFileMajorVersion,
          df.getFileMinorVersion,
          FileFields(
            df.getFieldsList.asScala.map(_.intValue).toArray,
            df.getColumnIndicesList.asScala.map(_.intValue).toArray
          )
        )
      // The file's row count, not the manifest's physical_rows: old writers recorded the count
      // after deletions there (test_dataset3).
      val physical = if (files.isEmpty) frag.getPhysicalRows
      else {
        val r = open(files.head);
        try r.numRows
        finally r.close()
      }
      // Each top-level field from the first data file that holds it.
      val cols: Seq[ColumnArray] = fields.map { f =>
        val holder = files.find(_.getFieldsList.asScala.exists(_.intValue == f.id))
        holder match {
          case None => ColumnArrays.allNull(ValueShape.of(f), physical.toInt)
          case Some(df) =>
            val reader = open(df)
            try {
              val n = reader.numRows
              assert(
                n == physical,
                s"data files of fragment ${frag.getId} disagree on the row count"
              )
              val scan = reader.scan(Seq(f), 0, n)
              // Several batches so reads cross page boundaries.
              val parts = Iterator.iterate(0L)(_ + batchRows).takeWhile(_ < n).map { s =>
                scan.next(math.min(batchRows.toLong, n - s).toInt)(0)
              }.toSeq
              scan.close()
              if (parts.isEmpty) scan.next(0)(0) else ColumnArrays.concat(parts)
            } finally reader.close()
        }
      }
      val dv = DeletionVector.read(io, _root_.io.sparklance.table.FragmentRef(root, snap, frag))
      if (dv.cardinality == 0) cols
      else {
        val n = cols.headOption.map(_.length).getOrElse(0)
        val keep = (0 until n).filterNot(dv.contains).toArray
        cols.map(ColumnArrays.take(_, keep))
      }
    }
    val merged = fields.indices.map { i =>
      if (perFragment.isEmpty) ColumnArrays.empty(ValueShape.of(fields(i)))
      else ColumnArrays.concat(perFragment.map(_(i)))
    }
    (snap, merged)
  }

  /** Canonical JSON of row `i` of `a`, a column of `field`. */
  def toJson(a: ColumnArray, field: LanceField, i: Int): JsonNode = {
    if (a.isNull(i) || a.isInstanceOf[NullArray]) return nf.nullNode()
    import LogicalType._
    (a, field.logicalType) match {
      case (s: StructArray, _) =>
        val o = nf.objectNode()
        field.children.zip(s.children).foreach { case (cf, ca) =>
          o.set[JsonNode](cf.name, toJson(ca, cf, i))
        }
        o
      case (l: ListArray, _) =>
        val arr = nf.arrayNode()
        var k = l.offsets(i)
        while (k < l.offsets(i + 1)) { arr.add(toJson(l.child, field.children.head, k)); k += 1 }
        arr
      case (f: FixedSizeListArray, FixedSizeList(item, dim)) =>
        val arr = nf.arrayNode()
        val itemField = field.copy(logicalType = item, children = Nil)
        var k = i * dim
        while (k < (i + 1) * dim) { arr.add(toJson(f.child, itemField, k)); k += 1 }
        arr
      case (d: DictionaryArray, _) =>
        val e = d.dictionary.values; val k = d.indices(i)
        toJson(
          new VarBinaryArray(
            1,
            null,
            Array(0, e.offsets(k + 1) - e.offsets(k)),
            java.util.Arrays.copyOfRange(e.data, e.offsets(k), e.offsets(k + 1))
          ),
          field,
          0
        )
      case (v: VarBinaryArray, t) =>
        val bytes = java.util.Arrays.copyOfRange(v.data, v.offsets(i), v.offsets(i + 1))
        val text = t match {
          case Utf8 | LargeUtf8 => true
          case Dictionary(Utf8 | LargeUtf8, _, _) => true
          case _ => false
        }
        if (text) nf.textNode(new String(bytes, StandardCharsets.UTF_8))
        else nf.textNode(java.util.Base64.getEncoder.encodeToString(bytes))
      case (f: FixedWidthArray, t) => fixed(f, t, i)
      case (other, t) =>
        throw new AssertionError(s"unexpected ${other.getClass.getSimpleName} for ${t.text}")
    }
  }

  private def fixed(f: FixedWidthArray, t: LogicalType, i: Int): JsonNode = {
    import LogicalType._
    val bb = java.nio.ByteBuffer.wrap(f.data).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val w = f.byteWidth
    val off = i * w
    def dbl(d: Double): JsonNode =
      if (d.isNaN) nf.textNode("NaN")
      else if (d.isPosInfinity) nf.textNode("Infinity")
      else if (d.isNegInfinity) nf.textNode("-Infinity")
      else nf.numberNode(d)
    t match {
      case Bool => nf.booleanNode(f.data(off) != 0)
      case Int8 => nf.numberNode(f.data(off).toLong)
      case UInt8 => nf.numberNode((f.data(off) & 0xff).toLong)
      case Int16 => nf.numberNode(bb.getShort(off).toLong)
      case UInt16 => nf.numberNode((bb.getShort(off) & 0xffff).toLong)
      case Int32 | Date32 => nf.numberNode(bb.getInt(off).toLong)
      case _: Time if w == 4 => nf.numberNode(bb.getInt(off).toLong)
      case UInt32 => nf.numberNode(bb.getInt(off) & 0xffffffffL)
      case Int64 | Date64 | _: Timestamp | _: Duration | _: Time => nf.numberNode(bb.getLong(off))
      case UInt64 =>
        nf.numberNode(new java.math.BigInteger(java.lang.Long.toUnsignedString(bb.getLong(off))))
      case Float32 => dbl(bb.getFloat(off).toDouble)
      case Float64 => dbl(bb.getDouble(off))
      case Float16 => dbl(halfToFloat(bb.getShort(off)).toDouble)
      case Decimal(_, _, scale) =>
        val be = new Array[Byte](w)
        var k = 0
        while (k < w) { be(k) = f.data(off + w - 1 - k); k += 1 }
        nf.textNode(new java.math.BigDecimal(new java.math.BigInteger(be), scale).toString)
      case FixedSizeBinary(_) =>
        nf.textNode(java.util.Base64.getEncoder.encodeToString(java.util.Arrays.copyOfRange(
          f.data,
          off,
          off + w
        )))
      case Dictionary(v, _, _) => fixed(f, v, i)
      case other => throw new AssertionError(s"no canonical form for ${other.text}")
    }
  }

  def halfToFloat(h: Short): Float = {
    val bits = h & 0xffff
    val sign = (bits >>> 15) & 1
    val exp = (bits >>> 10) & 0x1f
    val mant = bits & 0x3ff
    val v: Float =
      if (exp == 0) (mant / 1024.0f) * math.pow(2, -14).toFloat
      else if (exp == 31) (if (mant == 0) Float.PositiveInfinity else Float.NaN)
      else ((1 + mant / 1024.0f) * math.pow(2, exp - 15)).toFloat
    if (sign == 1) -v else v
  }

  /** Canonical JSON text-equivalent comparison: both sides re-parsed so number node kinds agree. */
  def normalize(n: JsonNode): JsonNode = mapper.readTree(mapper.writeValueAsString(n))

  /**
   * First mismatches between decoded columns and expected rows. Uses this file's renderer, not
   * testutil.CanonicalJson.same: that one compares numbers via decimalValue(), so a float32
   * widened exactly (-418.018463134765625) never equals pylance's shortest repr of the same
   * double (-418.0184631347656). Here both sides are re-parsed as doubles and compared exactly
   * (which also tells -0.0 from 0.0).
   */
  def compare(
      fields: Seq[LanceField],
      cols: Seq[ColumnArray],
      expected: IndexedSeq[JsonNode],
      limit: Int = 10
  ): Seq[String] = {
    val errs = scala.collection.mutable.ArrayBuffer[String]()
    val n = cols.headOption.map(_.length).getOrElse(0)
    if (n != expected.size) errs += s"row count: decoded $n, expected ${expected.size}"
    fields.zip(cols).foreach { case (f, c) =>
      if (c.length != n) errs += s"column ${f.name}: ${c.length} rows, other columns $n"
      var i = 0
      var bad = 0
      while (i < math.min(c.length, expected.size) && bad < limit) {
        val got = normalize(toJson(c, f, i))
        val exp = expected(i).get(f.name)
        if (exp == null) { errs += s"column ${f.name} missing from expected row $i"; bad = limit }
        else if (!got.equals(exp)) {
          errs += s"column ${f.name} row $i: decoded $got, expected $exp"; bad += 1
        }
        i += 1
      }
    }
    errs.toSeq
  }

  /** (name, dataset root, expected json) for fixture datasets whose name ends with one of `suffixes`. */
  def fixtures(suffixes: Seq[String]): Seq[(String, String, JsonNode)] = {
    val expectedDir = new File(testData, "expected")
    val files = Option(expectedDir.listFiles()).getOrElse(Array.empty[File])
      .filter(f => f.getName.endsWith(".json") && !f.getName.startsWith("_")).sortBy(_.getName)
    files.toSeq.flatMap { f =>
      val name = f.getName.stripSuffix(".json")
      if (!suffixes.exists(s => name.endsWith(s))) None
      else Some((name, new File(testData, s"datasets/$name.lance").getAbsolutePath, readJson(f)))
    }
  }

  def externalFixtures(): Seq[(String, String, JsonNode)] = {
    val dir = new File(testData, "expected/external")
    Option(dir.listFiles()).getOrElse(Array.empty[File]).filter(_.getName.endsWith(".json")).sortBy(
      _.getName
    ).toSeq.map { f =>
      val js = readJson(f)
      (
        f.getName.stripSuffix(".json"),
        new File(repoRoot, js.get("path").asText()).getCanonicalPath,
        js
      )
    }
  }

  def rowsFile(version: JsonNode): File = new File(testData, version.get("rows_file").asText())
}

/** Registers one test per (dataset, version): decode everything, compare with pylance's rows. */
abstract class FixtureReadSuiteBase extends org.scalatest.funsuite.AnyFunSuite {
  import FixtureSupport._

  protected def register(datasets: Seq[_root_.io.sparklance.testutil.Fixture]): Unit = {
    if (datasets.isEmpty) test("fixtures are present") { fail("no fixture datasets found") }
    datasets.foreach { fx =>
      fx.versions.foreach { v =>
        test(s"${fx.name} v${v.version} decodes exactly as pylance reads it") {
          val (snap, cols) = readVersion(fx.path.toString, v.version)
          // Parsed with a plain double-reading mapper (not Fixtures' BigDecimal one, which loses -0.0).
          val expected = readRows(_root_.io.sparklance.testutil.Fixtures.testData.resolve(
            v.json.get("rows_file").asText()
          ).toFile)
          val errs = compare(snap.schema.fields, cols, expected)
          assert(errs.isEmpty, errs.mkString("\n", "\n", ""))
          assert(cols.headOption.map(_.length.toLong).getOrElse(0L) == v.countRows)
        }
      }
    }
  }
}
