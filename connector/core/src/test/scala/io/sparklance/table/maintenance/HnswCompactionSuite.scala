package io.sparklance.table.maintenance

import scala.jdk.CollectionConverters._

import io.sparklance.testutil.{DefaultLineOnly, TempDirs}

/**
 * Compaction of fragments an IVF_HNSW index covers, against pylance's on a copy: the index is
 * remapped and its graphs repaired file for file as pylance does, or its fragments are left
 * alone where pylance's distances are not reproduced.
 */
@DefaultLineOnly
class HnswCompactionSuite extends CompactionTwinSuite {
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
      val dir = TempDirs.create("lance-hnsw-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
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
      assertSameIndexFiles(fo, fc)
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
      val dir = TempDirs.create("lance-hnsw-")
      val (o, c) = (dir.resolve("ours"), dir.resolve("copy"))
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
}
