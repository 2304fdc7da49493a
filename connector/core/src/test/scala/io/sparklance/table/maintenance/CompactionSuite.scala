package io.sparklance.table.maintenance

import java.nio.file.Path
import java.util.{Map => JMap}

import scala.jdk.CollectionConverters._

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.table.txn.TwinDatasetSuite
import io.sparklance.testutil.{DefaultLineOnly, Pylance}

/**
 * Our compaction against pylance's `optimize.compact_files` with the same options on twin
 * datasets: the same plan (which fragments, how many new ones, pylance's metrics), the same
 * table after it (rows, row ids, versions, fragments, index bitmaps) and pylance keeps going
 * alike; conflicts with concurrent pylance writers as pylance's own.
 */
@DefaultLineOnly
class CompactionSuite extends TwinDatasetSuite {
  private def ours(p: Path, opts: CompactionOptions = CompactionOptions()): CompactionMetrics =
    Compaction(fileIO, p.toString, opts)

  private def theirs(p: Path, opts: Map[String, Any] = Map.empty) =
    pylance("compact", p, opts.asJava)

  private def assertMetrics(m: CompactionMetrics, py: com.fasterxml.jackson.databind.JsonNode) = {
    assert(m.fragmentsRemoved == py.get("fragments_removed").asLong)
    assert(m.fragmentsAdded == py.get("fragments_added").asLong)
    assert(m.filesRemoved == py.get("files_removed").asLong)
    assert(m.filesAdded == py.get("files_added").asLong)
  }

  private def compacted(o: Path, t: Path, opts: CompactionOptions, py: Map[String, Any]): Unit = {
    val m = ours(o, opts)
    assertMetrics(m, theirs(t, py))
    assertTwins(o, t)
  }

  for (stable <- Seq(false, true)) {
    val ids = if (stable) " (stable row ids)" else ""
    test(s"small fragments with deletions compact into one, as pylance's$ids") {
      val (o, t) = twins(stable)
      Seq(o, t).foreach { p => pylance("appends", p, 4, 3); pylance("delete", p, "id = 1001") }
      compacted(o, t, CompactionOptions(), Map.empty)
    }

    test(s"a target of 15 rows splits the bins as pylance's$ids") {
      val (o, t) = twins(stable)
      Seq(o, t).foreach(p => pylance("appends", p, 5, 4))
      compacted(
        o,
        t,
        CompactionOptions(targetRowsPerFragment = 15),
        Map("target_rows_per_fragment" -> 15)
      )
    }

    test(s"a fragment over the target with many deletions is rewritten alone$ids") {
      val (o, t) = twins(stable)
      Seq(o, t).foreach(p => pylance("delete", p, "id >= 20 and id < 26"))
      compacted(
        o,
        t,
        CompactionOptions(targetRowsPerFragment = 10),
        Map("target_rows_per_fragment" -> 10)
      )
      // ... and with materialization off nothing is left to do.
      val (o2, t2) = twins(stable)
      Seq(o2, t2).foreach(p => pylance("delete", p, "id >= 20 and id < 26"))
      compacted(
        o2,
        t2,
        CompactionOptions(targetRowsPerFragment = 10, materializeDeletions = false),
        Map("target_rows_per_fragment" -> 10, "materialize_deletions" -> false)
      )
    }

    test(s"columns added, dropped and renamed before compaction are rewritten alike$ids") {
      val (o, t) = twins(stable)
      Seq(o, t).foreach { p =>
        pylance("add_null_columns", p, jlist(jlist("z", "int32")))
        pylance("keep_going", p)
        pylance("drop_columns", p, jlist("n"))
        pylance("rename_column", p, "s.b", "bb")
      }
      compacted(o, t, CompactionOptions(), Map.empty)
    }
  }

  for (stable <- Seq(false, true)) {
    test("indexed fragments are compacted and their BTREE indices remapped as pylance's " +
      s"(stable row ids: $stable)") {
      val (o, t) = twins(stable)
      Seq(o, t).foreach { p =>
        pylance("index", p); pylance("appends", p, 3, 2); pylance("delete", p, "id = 7")
      }
      val m = ours(o)
      assert(m.indexedFragmentsSkipped == 0)
      assertMetrics(m, theirs(t))
      assertTwins(o, t)
      for (name <- Seq("n_idx", "id_idx"))
        assert(pylance("index_files", o, name) == pylance("index_files", t, name), name)
      for (pred <- Seq("id = 25", "id >= 2 and id < 12", "id = 1003", "n < 1", "id = 7")) {
        val r = pylance("indexed", o, pred)
        assert(r.get("indexed") == r.get("flat"), pred)
      }
    }
  }

  for (stable <- Seq(false, true)) {
    test("fragments a BITMAP index covers are compacted and the index remapped as pylance's " +
      s"(stable row ids: $stable)") {
      val (o, t) = twins(stable)
      Seq(o, t).foreach { p =>
        pylance("bitmap_index", p, "n"); pylance("appends", p, 3, 2)
        pylance("delete", p, "id = 7")
      }
      val m = ours(o)
      assert(m.indexedFragmentsSkipped == 0)
      assertMetrics(m, theirs(t))
      assertTwins(o, t)
      val (mine, pys) = (pylance("index_files", o, "n_idx"), pylance("index_files", t, "n_idx"))
      assert(mine.get("description") == pys.get("description"))
      // The same file: keys, and each key's rows in Lance's tree-map bytes.
      assert(mine.get("bitmap_page_lookup.lance") == pys.get("bitmap_page_lookup.lance"))
      for (pred <- Seq("n = 0", "n < 1", "n = 1", "n is null", "id = 1003", "id = 7")) {
        val r = pylance("indexed", o, pred)
        assert(r.get("indexed") == r.get("flat"), pred)
      }
    }
  }

  private val KeptKinds = Seq(
    "BITMAP",
    "LABEL_LIST",
    "INVERTED",
    "NGRAM",
    "ZONEMAP",
    "BLOOMFILTER",
    "IVF_FLAT",
    "IVF_PQ",
    "IVF_SQ",
    "IVF_RQ",
    "IVF_HNSW_SQ"
  )

  for (
    (kind, stable) <- KeptKinds.map(_ -> true) ++ Seq("ZONEMAP" -> false, "BLOOMFILTER" -> false)
  ) {
    val how = if (stable) "with stable row ids" else "without stable row ids"
    test(s"$how a $kind index is kept as pylance keeps it") {
      val dir = io.sparklance.testutil.TempDirs.create("lance-kinds-")
      val (o, t, c) = (dir.resolve("ours"), dir.resolve("theirs"), dir.resolve("copy"))
      def call(fn: String, p: Path, args: Any*) = Pylance.call(module, fn, (p.toString +: args): _*)
      Seq(o, t).foreach(p => call("kinds_make", p, stable, kind))
      // pylance compacts a copy of ours too: the same index files, so the same answers.
      call("copy_dataset", o, c.toString)
      val (oursBefore, theirsBefore) = (call("kinds_index", o), call("kinds_index", t))
      val m = ours(o)
      assert(m.indexedFragmentsSkipped == 0)
      assertMetrics(m, theirs(t))
      val (a, b) = (call("kinds_index", o), call("kinds_index", t))
      // pylance keeps the index (its UUID and files) and moves its bitmap; so do we.
      assert(a.get("fragments") == b.get("fragments"), s"ours $a, pylance's $b")
      assert(
        (a.get("uuid") == oursBefore.get("uuid")) ==
          (b.get("uuid") == theirsBefore.get("uuid")),
        s"ours $a, pylance's $b"
      )
      theirs(c)
      assert(call("kinds_queries", o, kind) == call("kinds_queries", c, kind))
      assert(call("kinds_keep_going", o) == call("kinds_keep_going", t))
    }
  }

  // INVERTED_TAGS: a full-text index of a list of strings. IVF_RQ: binary codes of 1 to 5
  // bytes (packed in 32-row blocks, the rest transposed) and extended codes of 2 and 3 bits.
  for (
    kind <- Seq(
      "BITMAP",
      "LABEL_LIST",
      "NGRAM",
      "INVERTED",
      "INVERTED_TAGS",
      "IVF_FLAT",
      "IVF_SQ",
      "IVF_PQ",
      "IVF_RQ",
      "IVF_RQ:cosine:40:3",
      "IVF_RQ:dot:16:2",
      "IVF_RQ:l2:40:3",
      "IVF_FLAT:hamming",
      "IVF_PQ:l2:16:4:4",
      "IVF_FLAT:l2:8f16",
      "IVF_PQ:dot:8f64",
      "IVF_RQ:l2:16f16"
    );
    appended <- Seq(false, true)
  ) {
    val unindexed = if (appended) ", beside unindexed fragments" else ""
    test(s"a $kind index is remapped as pylance remaps it$unindexed") {
      val dir = io.sparklance.testutil.TempDirs.create("lance-ivf-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
      def call(fn: String, p: Path, args: Any*) = Pylance.call(module, fn, (p.toString +: args): _*)
      call("kinds_make", o, false, kind)
      if (appended) call("kinds_append", o)
      // pylance compacts a byte-for-byte copy: the same index before, so the same after.
      call("copy_dataset", o, c.toString)
      val before = call("kinds_index", o)
      val m = ours(o)
      assert(m.indexedFragmentsSkipped == 0)
      assertMetrics(m, theirs(c))
      val (a, b) = (call("kinds_index", o), call("kinds_index", c))
      assert(a.get("uuid") != before.get("uuid"))
      assert(a.get("fragments") == b.get("fragments"), s"ours $a, pylance's $b")
      if (kind.startsWith("IVF")) assert(call("kinds_aux", o) == call("kinds_aux", c))
      val (fo, fc) = (call("kinds_files", o), call("kinds_files", c))
      fc.fieldNames().asScala.foreach { f =>
        Seq("columns", "meta", "buffers", "rows").foreach { k =>
          val (x, y) = (fo.path(f).path(k), fc.path(f).path(k))
          val at = (0 until math.max(x.size, y.size)).find(i => x.path(i) != y.path(i))
          // The differing element's text from a little before its first differing character.
          val (xs, ys) =
            (at.map(x.path(_)).getOrElse(x).toString, at.map(y.path(_)).getOrElse(y).toString)
          val from = math.max(0, xs.zip(ys).takeWhile(p => p._1 == p._2).length - 60)
          assert(
            x == y,
            s"$f $k (sizes ${x.size}, ${y.size}) at $at, char $from: ours " +
              xs.slice(from, from + 300) + ", pylance's " + ys.slice(from, from + 300)
          )
        }
      }
      assert(call("kinds_queries", o, kind) == call("kinds_queries", c, kind))
      assert(call("kinds_keep_going", o) == call("kinds_keep_going", c))
    }
  }

  for (partitions <- Seq(false, true); positions <- Seq(false, true)) {
    val how = (if (partitions) " in several partitions" else "") +
      (if (positions) " with positions" else "")
    test(s"an INVERTED index of a large vocabulary$how is remapped as pylance remaps it") {
      // Long posting lists (full blocks, several impact groups, documents longer than 8
      // tokens), tokens that go, an fst of 3,000 tokens with a state of over 32 transitions.
      val dir = io.sparklance.testutil.TempDirs.create("lance-fts-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
      def call(fn: String, p: Path, args: Any*) = Pylance.call(module, fn, (p.toString +: args): _*)
      val words = call("fts_make", o, partitions, positions).get("words").elements().asScala
        .map(_.asText).toSeq
      // A partition all of whose documents go stays, empty (as pylance keeps it).
      if (partitions) assert(call("fts_drop_partition", o, 2).asInt > 0)
      call("copy_dataset", o, c.toString)
      val m = ours(o)
      assert(m.indexedFragmentsSkipped == 0 && m.fragmentsRemoved > 0)
      assertMetrics(m, theirs(c))
      val (a, b) = (call("kinds_index", o), call("kinds_index", c))
      assert(a.get("fragments") == b.get("fragments"), s"ours $a, pylance's $b")
      val (fo, fc) = (call("kinds_files", o), call("kinds_files", c))
      assert(fo.fieldNames().asScala.toSeq == fc.fieldNames().asScala.toSeq)
      assert(fc.has("part_1_docs.lance") == partitions)
      fc.fieldNames().asScala.foreach { f =>
        Seq("columns", "meta", "buffers", "rows").foreach { k =>
          val (x, y) = (fo.path(f).path(k), fc.path(f).path(k))
          val at = (0 until math.max(x.size, y.size)).find(i => x.path(i) != y.path(i))
          assert(x == y, s"$f $k (sizes ${x.size}, ${y.size}) at $at")
        }
      }
      val (qo, qc) =
        (call("fts_queries", o, words, positions), call("fts_queries", c, words, positions))
      assert(qo == qc)
      assert(qo.path("common").size > 10000)
      if (positions) assert(qo.path("phrase common common").size > 10000)
      assert(call("kinds_keep_going", o) == call("kinds_keep_going", c))
    }
  }

  // pylance 14 repairs an IVF_HNSW index's graphs deterministically: ours must match its files
  // row for row (every edge and distance), and answer alike even with a wide search.
  // A kind may name its metric after a colon (else L2), then the vectors' dimension (else 8; PQ
  // codes are of two sub-vectors): pylance measures the repaired edges of cosine and dot graphs
  // by their own distances, with f32 kernels whose summation order depends on the dimension.
  for (
    (kind, how) <- Seq("IVF_HNSW_SQ", "IVF_HNSW_FLAT", "IVF_HNSW_PQ").flatMap(k =>
      Seq(k -> "", k -> "append")
    ) ++ Seq(
      "IVF_HNSW_SQ" -> "empty",
      "IVF_HNSW_FLAT:cosine" -> "",
      "IVF_HNSW_FLAT:dot" -> "",
      "IVF_HNSW_PQ:cosine" -> "",
      "IVF_HNSW_PQ:dot" -> "",
      "IVF_HNSW_SQ:cosine" -> "",
      "IVF_HNSW_SQ:dot" -> "",
      "IVF_HNSW_FLAT:dot" -> "empty",
      "IVF_HNSW_PQ:dot" -> "append",
      "IVF_HNSW_SQ:cosine" -> "append",
      "IVF_HNSW_SQ:dot" -> "empty",
      "IVF_HNSW_FLAT:cosine:16" -> "",
      "IVF_HNSW_FLAT:dot:16" -> "",
      "IVF_HNSW_FLAT:cosine:12" -> "",
      "IVF_HNSW_FLAT:dot:12" -> "",
      "IVF_HNSW_SQ:dot:12" -> "",
      "IVF_HNSW_SQ:dot:16" -> "",
      "IVF_HNSW_FLAT:cosine:24" -> "",
      "IVF_HNSW_FLAT:dot:24" -> "",
      "IVF_HNSW_FLAT:cosine:32" -> "append",
      "IVF_HNSW_FLAT:dot:32" -> "",
      "IVF_HNSW_FLAT:l2:16" -> "",
      "IVF_HNSW_FLAT:l2:24" -> "",
      "IVF_HNSW_PQ:l2:32" -> "",
      "IVF_HNSW_PQ:cosine:32" -> "",
      "IVF_HNSW_PQ:dot:32" -> "",
      // 4-bit PQ codes (two sub-vectors a byte) and u8 vectors of the hamming metric.
      "IVF_HNSW_PQ:l2:8:4" -> "",
      "IVF_HNSW_PQ:l2:16:4:4" -> "append",
      "IVF_HNSW_PQ:dot:16:4:4" -> "",
      "IVF_HNSW_PQ:cosine:32:4:8" -> "",
      "IVF_HNSW_PQ:dot:8:4:4" -> "empty",
      "IVF_HNSW_FLAT:hamming" -> "",
      "IVF_HNSW_FLAT:hamming:16" -> "append",
      "IVF_HNSW_FLAT:hamming" -> "empty",
      "IVF_HNSW_SQ:l2:8f16" -> "",
      "IVF_HNSW_SQ:dot:8f64" -> ""
    )
  ) {
    val appended = how == "append"
    val unindexed = if (appended) ", beside unindexed fragments"
    else if (how == "empty") ", one partition losing every row"
    else ""
    test(s"an $kind index is remapped, its graphs repaired, as pylance does$unindexed") {
      val dir = io.sparklance.testutil.TempDirs.create("lance-hnsw-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
      def call(fn: String, p: Path, args: Any*) = Pylance.call(module, fn, (p.toString +: args): _*)
      call("kinds_make", o, false, kind)
      if (appended) call("kinds_append", o)
      if (how == "empty") assert(call("hnsw_drop_partition", o).asInt > 0)
      call("copy_dataset", o, c.toString)
      val before = call("kinds_index", o)
      val m = ours(o)
      assert(m.indexedFragmentsSkipped == 0 && m.fragmentsRemoved == 10 + (if (appended) 3 else 0))
      assertMetrics(m, theirs(c))
      val (a, b) = (call("kinds_index", o), call("kinds_index", c))
      assert(a.get("uuid") != before.get("uuid") && a.get("type") == b.get("type"))
      assert(a.get("fragments") == b.get("fragments"), s"ours $a, pylance's $b")
      assert(call("kinds_aux", o) == call("kinds_aux", c))
      val (fo, fc) = (call("kinds_files", o), call("kinds_files", c))
      assert(fo.fieldNames().asScala.toSeq == Seq("auxiliary.idx", "index.idx"))
      Seq("auxiliary.idx", "index.idx").foreach { f =>
        Seq("columns", "meta", "buffers", "rows").foreach { k =>
          val (x, y) = (fo.path(f).path(k), fc.path(f).path(k))
          val at = (0 until math.max(x.size, y.size)).find(i => x.path(i) != y.path(i))
          val same = x == y
          assert(
            same,
            s"$f $k (sizes ${x.size}, ${y.size}) at $at: ours " +
              at.map(x.path(_)).getOrElse(x).toString.take(300) + ", pylance's " +
              at.map(y.path(_)).getOrElse(y).toString.take(300)
          )
        }
      }
      assert(call("kinds_queries", o, kind) == call("kinds_queries", c, kind))
      for (ef <- Seq(30, 400)) assert(call("hnsw_nearest", o, ef) == call("hnsw_nearest", c, ef))
      assert(call("kinds_keep_going", o) == call("kinds_keep_going", c))
    }
  }

  // pylance 14 compacts these too, but its distances are not reproduced here (f16 ones come
  // from C kernels that differ by CPU): their fragments are left alone, and counted.
  for (
    kind <- Seq(
      "IVF_HNSW_FLAT:l2:8f16",
      "IVF_HNSW_FLAT:l2:8f64",
      "IVF_HNSW_PQ:l2:8f16",
      "IVF_HNSW_PQ:cosine:8f64"
    )
  ) {
    test(s"the fragments an $kind index covers are left alone and counted") {
      val dir = io.sparklance.testutil.TempDirs.create("lance-hnsw-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
      def call(fn: String, p: Path, args: Any*) = Pylance.call(module, fn, (p.toString +: args): _*)
      call("kinds_make", o, false, kind)
      call("kinds_append", o)
      call("copy_dataset", o, c.toString)
      val before = call("kinds_index", o)
      val m = ours(o)
      // The three unindexed fragments are compacted; the ten indexed ones are not.
      assert(m.indexedFragmentsSkipped == 10 && m.fragmentsRemoved == 3)
      assert(call("kinds_index", o) == before)
      assert(call("kinds_queries", o, kind) == call("kinds_queries", c, kind))
      for (ef <- Seq(30, 400)) assert(call("hnsw_nearest", o, ef) == call("hnsw_nearest", c, ef))
      assert(call("kinds_keep_going", o) == call("kinds_keep_going", c))
    }
  }

  for (version <- Seq("2.0", "2.1", "2.2")) {
    test(s"dictionary-encoded strings (Lance $version) are rewritten as pylance rewrites them") {
      val dir = io.sparklance.testutil.TempDirs.create("lance-dict-")
      val o = dir.resolve("ours")
      Pylance.call(module, "low_cardinality", o.toString, version)
      val t = io.sparklance.testutil.TempDirs.copyTree(o, dir.resolve("theirs"))
      compacted(o, t, CompactionOptions(), Map.empty)
    }
  }

  /** The rows pylance reads, without row ids (which are addresses without stable row ids). */
  private def values(d: com.fasterxml.jackson.databind.JsonNode) =
    d.get("rows").elements().asScala.map { r =>
      val c = r.deepCopy[com.fasterxml.jackson.databind.node.ObjectNode]()
      c.remove("_rowid")
      c
    }.toSeq.sortBy(_.get("id").asLong)

  test("nothing to compact commits nothing, as pylance") {
    val (o, t) = twins()
    Seq(o, t).foreach(p => pylance("delete", p, "id = 30"))
    val m = ours(o, CompactionOptions(targetRowsPerFragment = 5))
    assertMetrics(m, theirs(t, Map("target_rows_per_fragment" -> 5)))
    assert(describe(o).get("version") == describe(t).get("version"))
  }

  for (first <- Seq("delete", "appends")) {
    test(s"pylance's $first between our plan and commit: pylance's own outcome") {
      val (o, t) = twins()
      val read = latest(o)
      Seq(o, t).foreach { p =>
        if (first == "delete") pylance("delete", p, "id = 5") else pylance("appends", p, 1, 2)
      }
      val filesBefore = pylance("data_files", o)
      val got =
        try { Compaction(fileIO, o.toString, read = Some(read)); "ok" }
        catch {
          case e: LanceConcurrentModificationException =>
            if (e.retryable) "retryable" else "incompatible"
        }
      val want = pylance("stale_compact", t, read.version, JMap.of()).asText()
      assert(got == want)
      if (want == "ok") assertTwins(o, t)
      else assert(pylance("data_files", o) == filesBefore, "our rewritten files are removed")
    }
  }
}
