package io.sparklance.table.txn

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, Snapshot, VersionSpec}
import io.sparklance.testutil.{DefaultLineOnly, Pylance, TempDirs}

/**
 * Our Delete against pylance's `ds.delete` of the same rows: on twin copies of a dataset
 * pylance made, both sides must read back identically in pylance (rows, fragments, deletion
 * file kind and count), `validate()` must pass, and pylance must keep appending and deleting.
 * Every expected value is what pylance reports for its own copy.
 */
@DefaultLineOnly
class DeleteSuite extends AnyFunSuite {

  /** Calls `fn` of the pylance side of this suite (txn_ops.py). */
  private def py(fn: String, args: Any*) = Pylance.call("txn_ops", fn, args: _*)

  private val fileIO = HadoopFileIO.local()

  /** Two identical datasets (3 fragments: 50, 6000, 20 rows) made by pylance. */
  private def twins(version: String): (Path, Path) = {
    val dir = TempDirs.create("lance-delete-")
    val ours = dir.resolve("ours")
    py("make", ours.toString, version)
    (ours, TempDirs.copyTree(ours, dir.resolve("theirs")))
  }

  private def latest(p: Path): Snapshot =
    LanceDataset.open(fileIO, p.toString).open(VersionSpec.Latest)

  /** The row offsets pylance finds for `pred`, per fragment. */
  private def offsets(p: Path, pred: String): Map[Long, RoaringBitmap] =
    py("offsets", p.toString, pred).fields().asScala.map { e =>
      val rows = e.getValue.elements().asScala.map(_.asInt).toSeq
      e.getKey.toLong -> RoaringBitmap.bitmapOf(rows: _*)
    }.toMap

  private def assertSame(ours: JsonNode, theirs: JsonNode): Unit = {
    assert(theirs.get("valid").asBoolean(), theirs.get("valid"))
    assert(ours.get("valid") == theirs.get("valid"))
    assert(ours.get("count") == theirs.get("count"))
    assert(ours.get("rows") == theirs.get("rows"))
    assert(ours.get("values") == theirs.get("values"))
    assert(ours.get("fragments") == theirs.get("fragments"))
    assert(ours.get("operation") == theirs.get("operation"))
  }

  private def deleteBoth(ours: Path, theirs: Path, pred: String): Unit = {
    TableDelete.latest(fileIO, ours.toString, offsets(ours, pred), pred)
    py("op_delete", theirs.toString, pred)
  }

  // Few rows (Arrow), many rows (Roaring), and a whole fragment (removed) in one delete.
  private val mixed = "(id < 50 and id % 7 = 0) or (id >= 100 and id < 5700) or id >= 6050"

  for (v <- Seq("2.0", "2.2")) {
    test(s"delete on a pylance $v dataset reads as pylance's own delete of the same rows") {
      val (ours, theirs) = twins(v)
      deleteBoth(ours, theirs, mixed)
      assertSame(py("describe", ours.toString), py("describe", theirs.toString))
      assertSame(py("keep_going", ours.toString), py("keep_going", theirs.toString))
    }

    test(s"delete merges with the existing deletion vectors of a pylance $v dataset") {
      val (ours, theirs) = twins(v)
      Seq(ours, theirs).foreach(p => py("op_delete", p.toString, "id < 3 or id = 70"))
      deleteBoth(ours, theirs, "(id >= 10 and id < 20) or (id >= 60 and id < 5200)")
      assertSame(py("describe", ours.toString), py("describe", theirs.toString))
      assertSame(py("keep_going", ours.toString), py("keep_going", theirs.toString))
    }
  }

  // pylance commits `kind` on the version we read; then our delete of `pred` commits. pylance's
  // own pair (a stale handle deleting `pred` after `kind`) on the twin decides what must happen.
  private val pairs = Seq(
    ("append", "id = 2"),
    ("delete1", "id = 2"),
    ("delete1", "id = 1 or id = 60"),
    ("delete1", "id = 60"),
    ("overwrite", "id = 2")
  )

  for ((kind, pred) <- pairs) {
    test(s"concurrent pylance $kind, then our delete of $pred: as pylance's own pair") {
      val (ours, theirs) = twins("2.2")
      val read = latest(ours)
      val rows = offsets(ours, pred)
      py("op", ours.toString, kind)
      val expected = py("pair", theirs.toString, kind, pred)
      expected.get("outcome").asText() match {
        case "ok" =>
          val r = TableDelete(fileIO, read, rows, pred)
          assert(r.attempts == 2)
          assertSame(
            py("describe", ours.toString),
            py("describe", theirs.toString)
          )
        case "incompatible" =>
          val e = intercept[LanceConcurrentModificationException] {
            TableDelete(fileIO, read, rows, pred)
          }
          val next = read.version + 1
          val expected = s"this Delete conflicts with the Overwrite committed at version $next"
          assert(e.getMessage.contains(expected))
          assert(e.getMessage.contains(s"started from version ${read.version}"))
          assert(latest(ours).version == read.version + 1)
        case other => fail(s"pylance's own pair ended with $other: $expected")
      }
    }
  }
}
