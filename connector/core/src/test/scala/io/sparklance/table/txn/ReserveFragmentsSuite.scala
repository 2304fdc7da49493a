package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * Our ReserveFragments on pylance datasets (`table_ops.py`): the table pylance reads stays
 * the same, one version on; the reserved ids are never handed out again — not by pylance's
 * appends nor by its compaction — and pylance validates and keeps going. (pylance commits
 * ReserveFragments only inside its compaction, so its conflicts are checked in
 * TransactionMatrixSuite's "compact" row and KillAtCommitSuite's "reserve_fragments".)
 */
class ReserveFragmentsSuite extends TwinDatasetSuite {
  private def fragmentIds(d: JsonNode): Seq[Long] =
    d.get("fragments").elements().asScala.map(_.get("id").asLong).toSeq

  /**
   * What pylance reads of both alike; without stable row ids a row id is the row's address,
   * which moves with the fragment ids the reservation shifted.
   */
  private def assertSameTable(ours: JsonNode, theirs: JsonNode, stable: Boolean): Unit = {
    def rows(d: JsonNode) = d.get("rows").elements().asScala.map { r =>
      val o = r.deepCopy[ObjectNode](); if (!stable) o.remove("_rowid"); o
    }.toSeq.sortBy(_.toString)
    assert(rows(ours) == rows(theirs))
    Seq("schema", "fields", "config", "indices", "valid").foreach { k =>
      assert(ours.get(k) == theirs.get(k), s"$k differs")
    }
  }

  for (stable <- Seq(false, true)) {
    test(s"reserved ids are skipped by pylance's appends and compaction (stable: $stable)") {
      val (ours, theirs) = twins(stable)
      val before = latest(ours)
      val top = before.manifest.getMaxFragmentId
      commit(ours, _ => ReserveFragments(3))
      val after = latest(ours)
      assert(after.version == before.version + 1)
      assert(after.manifest.getMaxFragmentId == top + 3)
      assert(after.fragments == before.fragments)
      assertSameTable(describe(ours), describe(theirs), stable)
      assert(new TransactionLog(fileIO, ours.toString).of(after).operationName ==
        "ReserveFragments")

      Seq(ours, theirs).foreach(p => pylance("append_current", p, 2))
      val appended = fragmentIds(describe(ours)).last
      assert(appended == top + 4, s"pylance's append took id $appended over the reserved ones")
      Seq(ours, theirs).foreach(p => pylance("compact", p, Map[String, Any]().asJava))
      val mine = describe(ours)
      assertSameTable(mine, describe(theirs), stable)
      assert(fragmentIds(mine).forall(id => id <= top || id > top + 3), fragmentIds(mine))
      assertSameTable(pylance("keep_going", ours), pylance("keep_going", theirs), stable)
    }
  }
}
