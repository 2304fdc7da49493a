package io.sparklance.format.structural

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.JsonNodeFactory

import io.sparklance.format._
import io.sparklance.storage.{HadoopFileIO, Paths}
import io.sparklance.table.{DeletionVector, FragmentRef, LanceDataset, VersionSpec}
import io.sparklance.testutil.CanonicalJson

/**
 * Reads a dataset version through the structural reader directly (manifest, fragments in
 * manifest order, data files, deletions) and renders rows in the fixtures' canonical JSON.
 */
object StructuralTestSupport {
  lazy val io = new HadoopFileIO(new org.apache.hadoop.conf.Configuration())
  private val nf = JsonNodeFactory.instance

  /** Canonical rows of `version` of the dataset at `root`, reading `batch` rows per `next` call. */
  def readRows(root: String, version: Long, batch: Int): IndexedSeq[JsonNode] =
    readRows(root, version, batch, None)

  /**
   * Like [[readRows]]; with `range`, every fragment is scanned over physical rows
   * [from, until) only (clamped), as a partition split would. With `shared`, batches come
   * from [[FileScan.nextShared]] (arrays over the scan's buffers) and are copied out before
   * the next call, as the Spark reader copies them.
   */
  def readRows(
      root: String,
      version: Long,
      batch: Int,
      range: Option[(Long, Long)],
      shared: Boolean = false
  ): IndexedSeq[JsonNode] = {
    val snap = LanceDataset.open(io, root).open(VersionSpec.Number(version))
    val fields = snap.schema.fields
    val out = IndexedSeq.newBuilder[JsonNode]
    snap.fragments.foreach { frag0 =>
      val frag = FragmentRef(root, snap, frag0)
      val (from, until) = range.map { case (a, b) =>
        (math.min(a, frag.physicalRows), math.min(b, frag.physicalRows))
      }
        .getOrElse((0L, frag.physicalRows))
      val rows = until - from
      val dv = DeletionVector.read(io, frag)
      // Each top-level field comes from the first data file holding its leaves (null if none does).
      val cols = Array.fill[Array[ColumnArray]](fields.size)(Array.empty)
      val taken = scala.collection.mutable.Set[Int]()
      frag.files.foreach { df =>
        val ids = df.fieldIds.toSet
        val mine = fields.indices.filter(i =>
          !taken(i) && fields(i).preOrder.exists(f => ids.contains(f.id))
        )
        if (mine.nonEmpty) {
          taken ++= mine
          require(
            df.major == 2 && (df.minor == 1 || df.minor == 2),
            s"data file ${df.path} is ${df.major}.${df.minor}"
          )
          val c = FileContainer.open(io.open(df.path))
          val scan =
            StructuralFileReader.scan(c, mine.map(fields), df.fileFields, df.minor, from, until)
          val parts = Array.fill(mine.size)(Seq.newBuilder[ColumnArray])
          var done = 0L
          while (done < rows) {
            val k = math.min(batch.toLong, rows - done).toInt
            val arrs =
              if (shared)
                scan.nextShared(k).map(a => ColumnArrays.take(a, Array.range(0, a.length)))
              else scan.next(k)
            arrs.indices.foreach(j => parts(j) += arrs(j))
            done += k
          }
          mine.indices.foreach(j => cols(mine(j)) = parts(j).result().toArray)
        }
      }
      // Walk batches row by row.
      val cursors = fields.indices.map(i => new RowCursor(cols(i)))
      var r = 0L
      while (r < rows) {
        val row = nf.objectNode()
        fields.indices.foreach { i =>
          val v = cursors(i).next(fields(i))
          row.set[JsonNode](fields(i).name, v)
        }
        if (!dv.contains((from + r).toInt)) out += row
        r += 1
      }
    }
    out.result()
  }

  private final class RowCursor(arrs: Array[ColumnArray]) {
    private var a = 0; private var i = 0
    def next(f: LanceField): JsonNode = {
      if (arrs.isEmpty) return nf.nullNode()
      while (i >= arrs(a).length) { a += 1; i = 0 }
      val v = CanonicalJson.value(f, arrs(a), i); i += 1; v
    }
  }

  /** Mismatch descriptions (at most `limit`), empty when all rows equal. */
  def diff(
      expected: IndexedSeq[JsonNode],
      actual: IndexedSeq[JsonNode],
      limit: Int = 10
  ): Seq[String] = {
    val out = scala.collection.mutable.ArrayBuffer[String]()
    if (expected.size != actual.size)
      out += s"row count: expected ${expected.size}, got ${actual.size}"
    val perCol = scala.collection.mutable.LinkedHashMap[String, Int]()
    expected.indices.take(actual.size).foreach { r =>
      val e = expected(r); val a = actual(r)
      e.fieldNames().asScala.foreach { c =>
        if (!same(e.get(c), a.get(c))) {
          val k = perCol.getOrElse(c, 0); perCol(c) = k + 1
          if (k < 2 && out.size < limit)
            out += s"row $r column $c: expected ${trunc(e.get(c))} got ${trunc(a.get(c))}"
        }
      }
    }
    if (perCol.nonEmpty)
      out += s"mismatching columns (rows): ${perCol.map { case (c, n) => s"$c($n)" }.mkString(", ")}"
    out.toSeq
  }

  /**
   * CanonicalJson.same, except that floats compare as doubles: the fixtures print Python's
   * shortest round-trip repr, which is not the exact decimal expansion of the double.
   */
  def same(e: JsonNode, a: JsonNode): Boolean =
    if (e == null || a == null) e == a
    else if (e.isNumber && a.isNumber)
      CanonicalJson.same(e, a) || ((e.isFloatingPointNumber || a.isFloatingPointNumber) &&
        e.decimalValue().doubleValue() == a.decimalValue().doubleValue())
    else if (e.isArray && a.isArray)
      e.size == a.size && (0 until e.size).forall(k => same(e.get(k), a.get(k)))
    else if (e.isObject && a.isObject)
      e.size == a.size && e.fieldNames().asScala.forall(k => a.has(k) && same(e.get(k), a.get(k)))
    else CanonicalJson.same(e, a)

  private def trunc(n: JsonNode): String = {
    val s = String.valueOf(n); if (s.length > 200) s.take(200) + "..." else s
  }
}

/** The extra fixtures of src-test-data/structural/ (generate_structural.py). */
object StructuralFixtures {
  import io.sparklance.testutil.Fixtures
  lazy val dir: java.nio.file.Path = Fixtures.testData.resolve("structural")
  lazy val names: Seq[String] =
    Fixtures.mapper.readTree(dir.resolve("_index.json").toFile).get(
      "datasets"
    ).elements().asScala.map(_.get("name").asText()).toSeq
  def path(name: String): String = dir.resolve(s"$name.lance").toString
  def rows(name: String): IndexedSeq[JsonNode] = {
    val in = new java.util.zip.GZIPInputStream(
      java.nio.file.Files.newInputStream(dir.resolve(s"$name.jsonl.gz"))
    )
    val r = new java.io.BufferedReader(new java.io.InputStreamReader(in, "UTF-8"))
    try r.lines().iterator().asScala.filter(_.nonEmpty).map(l =>
        Fixtures.mapper.readTree(l)
      ).toIndexedSeq
    finally r.close()
  }
}
