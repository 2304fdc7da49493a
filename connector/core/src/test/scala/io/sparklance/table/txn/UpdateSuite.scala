package io.sparklance.table.txn

import java.nio.file.Path

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, Snapshot, VersionSpec}
import io.sparklance.testutil.{Pylance, TempDirs}

/**
 * Our Update against pylance's `ds.update(n = n + k)` of the same rows: on twin copies of a
 * dataset pylance made, pylance must read both back identically (rows, values, stable row
 * ids, created/last-updated versions, fragments, deletion files, the Update transaction),
 * `validate()` them, and keep appending, deleting and updating. Every expected value is what
 * pylance reports for its own copy.
 */
class UpdateSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  private def twins(version: String, stable: Boolean): (Path, Path) = {
    val dir = TempDirs.create("lance-update-")
    val ours = dir.resolve("ours")
    Pylance.call("update_ops", "make", ours.toString, version, stable)
    (ours, TempDirs.copyTree(ours, dir.resolve("theirs")))
  }

  private def latest(p: Path): Snapshot =
    LanceDataset.open(fileIO, p.toString).open(VersionSpec.Latest)

  private def update(s: Snapshot, pred: String, add: Long): Operation =
    OurOps.update(s, pred, add)

  private def ourUpdate(p: Path, pred: String, add: Long): CommitResult =
    new Committer(fileIO, p.toString).execute(latest(p))(update(_, pred, add))

  private def describe(p: Path): JsonNode = Pylance.call("update_ops", "describe", p.toString)

  private def assertSame(ours: JsonNode, theirs: JsonNode): Unit = {
    assert(theirs.get("valid").asBoolean(), theirs.get("valid"))
    Seq("valid", "version", "rows", "fragments", "txn", "indices").foreach { k =>
      assert(ours.get(k) == theirs.get(k), s"$k differs")
    }
  }

  private val scattered = "id = 3 or id = 25 or (id >= 30 and id < 33)"

  for (v <- Seq("2.0", "2.2"); stable <- Seq(false, true)) {
    val kind = if (stable) "stable row ids" else "row addresses"
    test(s"update of scattered rows of a pylance $v dataset with $kind, as pylance's") {
      val (ours, theirs) = twins(v, stable)
      ourUpdate(ours, scattered, 5)
      Pylance.call("update_ops", "update", theirs.toString, scattered, 5)
      assertSame(describe(ours), describe(theirs))
      assertSame(
        Pylance.call("update_ops", "keep_going", ours.toString),
        Pylance.call("update_ops", "keep_going", theirs.toString)
      )
    }

    test(s"update of every row of a fragment, then again, on $v with $kind, as pylance's") {
      val (ours, theirs) = twins(v, stable)
      ourUpdate(ours, "id < 20", 1)
      Pylance.call("update_ops", "update", theirs.toString, "id < 20", 1)
      assertSame(describe(ours), describe(theirs))
      // The second update moves the rows out of the fragment the first one wrote.
      ourUpdate(ours, "id < 20 and id % 2 = 0", 2)
      Pylance.call("update_ops", "update", theirs.toString, "id < 20 and id % 2 = 0", 2)
      assertSame(describe(ours), describe(theirs))
      assertSame(
        Pylance.call("update_ops", "keep_going", ours.toString),
        Pylance.call("update_ops", "keep_going", theirs.toString)
      )
    }
  }

  test("a scalar index pylance built keeps answering exactly after our update") {
    val (ours, theirs) = twins("2.2", stable = false)
    Seq(ours, theirs).foreach(p => Pylance.call("update_ops", "index", p.toString))
    ourUpdate(ours, scattered, 5)
    Pylance.call("update_ops", "update", theirs.toString, scattered, 5)
    assertSame(describe(ours), describe(theirs))
    for (pred <- Seq("id = 25", "id >= 2 and id <= 31", "id = 39")) {
      val r = Pylance.call("update_ops", "indexed", ours.toString, pred)
      assert(r.get("indexed") == r.get("flat"), pred)
      assert(r == Pylance.call("update_ops", "indexed", theirs.toString, pred), pred)
    }
  }

  // pylance commits `first` on the version we read; then our update commits. pylance's own
  // pair (a handle opened at that version updating after `first`) decides what must happen.
  private val concurrent: Seq[(String, Path => Unit, String)] = Seq(
    (
      "the same row updated",
      p => Pylance.call("update_ops", "update", p.toString, "id = 2", 1),
      "id = 2"
    ),
    (
      "another row of the fragment updated",
      p => Pylance.call("update_ops", "update", p.toString, "id = 3", 1),
      "id = 2"
    ),
    (
      "a row of the fragment deleted",
      p => Pylance.call("txn_matrix", "delete", p.toString, "id = 1"),
      "id = 2"
    ),
    (
      "the updated row deleted",
      p => Pylance.call("txn_matrix", "delete", p.toString, "id = 2"),
      "id = 2"
    )
  )

  for ((what, first, pred) <- concurrent; stable <- Seq(false, true)) {
    test(s"concurrent pylance commit ($what), then our update (stable ids: $stable)") {
      val (ours, theirs) = twins("2.2", stable)
      val read = latest(ours)
      first(ours)
      new Committer(fileIO, ours.toString).execute(read)(update(_, pred, 10))
      first(theirs)
      Pylance.call("update_ops", "stale_update", theirs.toString, read.version, pred, 10)
      assertSame(describe(ours), describe(theirs))
    }
  }
}
