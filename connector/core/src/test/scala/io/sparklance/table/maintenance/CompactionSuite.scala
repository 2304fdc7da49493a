package io.sparklance.table.maintenance

import java.util.{Map => JMap}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.testutil.{DefaultLineOnly, Pylance, TempDirs}

/**
 * Our compaction against pylance's on twin datasets: the same plan (which fragments, how many
 * new ones, pylance's metrics), the same table after it (rows, row ids, versions, fragments,
 * BTREE and BITMAP index bitmaps) and pylance keeps going alike; conflicts with concurrent
 * pylance writers as pylance's own. The other index kinds: IndexCompactionSuite and
 * HnswCompactionSuite.
 */
@DefaultLineOnly
class CompactionSuite extends CompactionTwinSuite {
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

  for (version <- Seq("2.0", "2.1", "2.2")) {
    test(s"dictionary-encoded strings (Lance $version) are rewritten as pylance rewrites them") {
      val dir = TempDirs.create("lance-dict-")
      val o = dir.resolve("ours")
      Pylance.call(module, "low_cardinality", o.toString, version)
      val t = TempDirs.copyTree(o, dir.resolve("theirs"))
      compacted(o, t, CompactionOptions(), Map.empty)
    }
  }

  /** The rows pylance reads, without row ids (which are addresses without stable row ids). */
  private def values(d: JsonNode) =
    d.get("rows").elements().asScala.map { r =>
      val c = r.deepCopy[ObjectNode]()
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
