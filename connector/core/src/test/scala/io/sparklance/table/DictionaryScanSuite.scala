package io.sparklance.table

import java.io.{BufferedReader, InputStreamReader}
import java.nio.charset.StandardCharsets.UTF_8
import java.util.zip.GZIPInputStream

import com.fasterxml.jackson.databind.ObjectMapper
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.FilterValue.BytesValue
import io.sparklance.table.RowFilter._

/**
 * The paged pylance fixtures (src-test-data/pages: columns cut into tens of pages, the string
 * column `s` dictionary-encoded page by page) read through the fragment reader: top-level `s`
 * must come out as dictionary arrays (so the tests below exercise them), nested `st.b` as
 * bytes, and the values, filtered or not, must be what pylance read (paged_<fmt>.jsonl.gz).
 */
class DictionaryScanSuite extends AnyFunSuite {
  private lazy val fileIO = new HadoopFileIO(new org.apache.hadoop.conf.Configuration())
  private val dir = _root_.io.sparklance.testutil.Fixtures.testData.resolve("pages")
  private def root(fmt: String): String = dir.resolve(s"paged_$fmt.lance").toString

  /** pylance's `s` and `st.b` per row, in dataset order. */
  private def expected(fmt: String): IndexedSeq[(Option[String], Option[String])] = {
    val f = dir.resolve(s"paged_$fmt.jsonl.gz").toFile
    val in = new BufferedReader(new InputStreamReader(
      new GZIPInputStream(new java.io.FileInputStream(f)),
      UTF_8
    ))
    val mapper = new ObjectMapper()
    try Iterator.continually(in.readLine()).takeWhile(_ != null).map { line =>
        val j = mapper.readTree(line)
        def opt(n: com.fasterxml.jackson.databind.JsonNode) =
          if (n == null || n.isNull) None else Some(n.asText())
        (opt(j.get("s")), opt(j.get("st").get("b")))
      }.toIndexedSeq
    finally in.close()
  }

  private def strings(a: ColumnArray): Seq[Option[String]] = {
    val v = ColumnArrays.materialize(a).asInstanceOf[VarBinaryArray]
    (0 until v.length).map(i =>
      if (v.isNull(i)) None
      else Some(new String(v.data, v.offsets(i), v.offsets(i + 1) - v.offsets(i), UTF_8))
    )
  }

  /**
   * Reads `names` (top-level fields) of every fragment of the latest version in batches of
   * `batch`, optionally with `filter` pushed: the kept batches' arrays, per field.
   */
  private def scan(
      root: String,
      names: Seq[String],
      batch: Int,
      filter: RowFilter = null
  ): Seq[Array[ColumnArray]] = {
    val snap = LanceDataset.open(fileIO, root).open(VersionSpec.Latest)
    val byName = snap.schema.fields.map(f => f.name -> f).toMap
    val fields = names.map(byName)
    val f = if (filter == null) null
    else FragmentReader.Filter(
      new RowFilterEvaluator(filter, byName),
      filter.columns.toSeq.map(byName)
    )
    val out = Seq.newBuilder[Array[ColumnArray]]
    snap.fragments.foreach { frag0 =>
      val frag = FragmentRef(root, snap, frag0)
      val r = new FragmentReader(
        fileIO,
        frag,
        fields,
        DeletionVector.read(fileIO, frag),
        0,
        frag.physicalRows,
        f
      )
      try {
        while (r.remaining > 0) {
          val (arrays, kept) = r.next(math.min(batch.toLong, r.remaining).toInt)
          if (kept > 0) out += arrays
        }
      } finally r.close()
    }
    out.result()
  }

  /** s, st.b and the number of s batches that were dictionary arrays, of the paged fixture. */
  private def scanPaged(
      fmt: String,
      batch: Int,
      filter: RowFilter = null
  ): (Seq[Option[String]], Seq[Option[String]], Int, Int) = {
    val batches = scan(root(fmt), Seq("s", "st"), batch, filter)
    val s = batches.flatMap(a => strings(a(0)))
    val b = batches.flatMap { a =>
      val st = a(1).asInstanceOf[StructArray]
      assert(!st.children(1).isInstanceOf[DictionaryArray], "a nested string kept its dictionary")
      strings(st.children(1)).zipWithIndex.map { case (v, i) => if (st.isNull(i)) None else v }
    }
    (s, b, batches.count(_(0).isInstanceOf[DictionaryArray]), batches.size)
  }

  for (fmt <- Seq("2.0", "2.1", "2.2"); batch <- Seq(37, 250, 1000, 5000)) {
    test(s"paged_$fmt in batches of $batch: s as dictionary arrays, values as pylance read them") {
      val want = expected(fmt)
      val (s, b, dictBatches, batches) = scanPaged(fmt, batch)
      assert(s == want.map(_._1))
      assert(b == want.map(_._2))
      // pylance 2.1+ dictionary-encodes every page of s (a batch across several dictionaries with
      // more entries than rows is bytes); its 2.0 writer chose plain pages for s, only st.b's
      // are dictionaries (the 2.0 reader is checked on deletions_bitmap_2.0 below).
      if (fmt != "2.0")
        assert(dictBatches * 2 >= batches, s"$dictBatches of $batches batches kept the dictionary")
    }
  }

  for (fmt <- Seq("2.0", "2.1", "2.2")) {
    test(s"paged_$fmt: pushed string predicates on the dictionary column") {
      val want = expected(fmt).map(_._1)
      val k3 = "k3".getBytes(UTF_8)
      val cases: Seq[(RowFilter, Option[String] => Boolean)] = Seq(
        StringMatch("s", MatchKind.StartsWith, k3, negated = false) -> (_.exists(
          _.startsWith("k3")
        )),
        Compare("s", CompareOp.Eq, BytesValue("k5k5".getBytes(UTF_8))) -> (_.contains("k5k5")),
        In(
          "s",
          Seq(BytesValue("k1".getBytes(UTF_8)), BytesValue("k2k2k2".getBytes(UTF_8))),
          negated = true
        ) ->
          (v => v.exists(x => x != "k1" && x != "k2k2k2")),
        Compare("s", CompareOp.Gt, BytesValue("k7".getBytes(UTF_8))) -> (_.exists(_ > "k7")),
        IsNull("s", negated = false) -> (_.isEmpty)
      )
      cases.foreach { case (filter, keep) =>
        Seq(64, 700).foreach { batch =>
          val (got, _, _, _) = scanPaged(fmt, batch, filter)
          val w = want.filter(keep)
          assert(w.nonEmpty)
          assert(got == w, s"$filter in batches of $batch")
        }
      }
    }
  }

  test(
    "multifrag_2.0: 2.0 dictionary and plain pages of s in different fragments, filtered, as pylance read it"
  ) {
    val fx = _root_.io.sparklance.testutil.Fixtures("multifrag_2.0")
    val root = fx.path.toString
    val want = fx.version(fx.latestVersion).rows.map(r =>
      Option(r.get("s")).filterNot(_.isNull).map(_.asText())
    )
    Seq(1, 100, 4096).foreach { batch =>
      val batches = scan(root, Seq("s"), batch)
      assert(batches.flatMap(a => strings(a(0))) == want, s"batches of $batch")
      assert(
        batches.exists(_(0).isInstanceOf[DictionaryArray]),
        s"no dictionary array in batches of $batch"
      )
    }
    val filter = StringMatch("s", MatchKind.Contains, "a".getBytes(UTF_8), negated = false)
    val got = scan(root, Seq("s"), 100, filter).flatMap(a => strings(a(0)))
    assert(got == want.filter(_.exists(_.contains("a"))) && got.nonEmpty)
  }
}
