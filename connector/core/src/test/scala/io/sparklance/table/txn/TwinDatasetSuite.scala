package io.sparklance.table.txn

import java.nio.file.Path

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, Snapshot, VersionSpec}
import io.sparklance.testutil.{ManifestView, Pylance, TempDirs}

/**
 * Base of the suites that check one of our operations against pylance's own on twin copies
 * of a dataset pylance made (`table_ops.py`): after both, pylance must read the two alike
 * (schema, field ids, rows with row ids, fragments, config, metadata, indices, the
 * operation), validate them, and keep going on them alike; the manifests must print alike
 * but for what differs between writers (`ManifestView`).
 */
abstract class TwinDatasetSuite extends AnyFunSuite {
  protected val fileIO = HadoopFileIO.local()
  protected val module = "table_ops"

  /** A dataset pylance made (versions 1-3), and its copy. */
  protected def twins(stable: Boolean = false, version: String = "2.2"): (Path, Path) = {
    val dir = TempDirs.create("lance-twins-")
    val ours = dir.resolve("ours")
    Pylance.call(module, "make", ours.toString, version, stable)
    (ours, TempDirs.copyTree(ours, dir.resolve("theirs")))
  }

  protected def latest(p: Path): Snapshot =
    LanceDataset.open(fileIO, p.toString).open(VersionSpec.Latest)

  protected def commit(p: Path, op: Snapshot => Operation): CommitResult =
    new Committer(fileIO, p.toString).commit(Some(latest(p)), op(latest(p)))

  protected def pylance(fn: String, p: Path, args: Any*): JsonNode =
    Pylance.call(module, fn, (p.toString +: args): _*)

  /** A Java list for pylance's arguments (`JList.of` of one value is ambiguous on Scala 2.12). */
  protected def jlist(xs: AnyRef*): java.util.List[AnyRef] = java.util.Arrays.asList(xs: _*)

  protected def describe(p: Path): JsonNode = pylance("describe", p)

  /** pylance reads both alike, the manifests print alike, and pylance keeps going alike. */
  protected def assertTwins(ours: Path, theirs: Path): Unit = {
    assertSameJson("after the operation", describe(ours), describe(theirs))
    assert(ManifestView.of(latest(ours)) == ManifestView.of(latest(theirs)))
    assertSameJson(
      "after pylance keeps going",
      pylance("keep_going", ours),
      pylance("keep_going", theirs)
    )
  }

  protected def assertSameJson(what: String, ours: JsonNode, theirs: JsonNode): Unit =
    TxnMatrix.assertSame(what, ours, theirs)

  /** "ok", "retryable" or "incompatible": how our commit of `op` read at `read` ended. */
  protected def outcome(p: Path, read: Snapshot, op: Operation): String =
    try { new Committer(fileIO, p.toString).commit(Some(read), op); "ok" }
    catch {
      case e: LanceConcurrentModificationException =>
        if (e.retryable) "retryable" else "incompatible"
    }
}
