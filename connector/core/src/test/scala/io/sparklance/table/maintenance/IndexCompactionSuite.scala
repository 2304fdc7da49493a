package io.sparklance.table.maintenance

import scala.jdk.CollectionConverters._

import io.sparklance.testutil.{DefaultLineOnly, TempDirs}

/**
 * Compaction of fragments every other index kind covers, against pylance's on a copy: scalar,
 * full-text and IVF indices kept (stable row ids) or remapped file for file as pylance does.
 */
@DefaultLineOnly
class IndexCompactionSuite extends CompactionTwinSuite {
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
      val dir = TempDirs.create("lance-kinds-")
      val (o, t, c) = (dir.resolve("ours"), dir.resolve("theirs"), dir.resolve("copy"))
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
      val dir = TempDirs.create("lance-ivf-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
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
      assertSameIndexFiles(fo, fc)
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
      val dir = TempDirs.create("lance-fts-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
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
      assertSameIndexFiles(fo, fc)
      val (qo, qc) =
        (call("fts_queries", o, words, positions), call("fts_queries", c, words, positions))
      assert(qo == qc)
      assert(qo.path("common").size > 10000)
      if (positions) assert(qo.path("phrase common common").size > 10000)
      assert(call("kinds_keep_going", o) == call("kinds_keep_going", c))
    }
  }
}
