package io.sparklance.table.txn

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.{LanceConcurrentModificationException, LanceInvalidOptionException}
import io.sparklance.format.writer.FileVersion
import io.sparklance.storage.HadoopFileIO
import io.sparklance.testutil.TinyDatasets
import io.sparklance.testutil.TinyDatasets.{fields, fragment, ids, latest, newRoot}

/** The write rules of the table layer: versions, existence, and how each plan commits. */
class WritePlanSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  private def create(root: String, version: FileVersion): Unit =
    WritePlan.replace(root, None, fields, Some(version), mustCreate = true)
      .commit(fileIO, Seq(fragment(root, 0L until 3L, version)), CommitOptions())

  test("no dataset yet: existing is None; a create commits version 1 in the requested version") {
    val root = newRoot()
    assert(WritePlan.existing(fileIO, root).isEmpty)
    create(root, FileVersion.V2_1)
    val s = WritePlan.existing(fileIO, root).get
    assert(s.version == 1 && s.dataStorageVersion == "2.1" && ids(fileIO, s) == (0L until 3L))
  }

  test("an append keeps the dataset's file version and refuses another one, naming both") {
    val root = newRoot()
    create(root, FileVersion.V2_1)
    val s = latest(fileIO, root)
    assert(WritePlan.append(s, None, fields).fileVersion == FileVersion.V2_1)
    val e =
      intercept[LanceInvalidOptionException](WritePlan.append(s, Some(FileVersion.V2_2), fields))
    assert(e.getMessage.contains("2.2") && e.getMessage.contains("2.1"))
  }

  test("an overwrite keeps the dataset's version unless asked, and re-runs after a racing one") {
    val root = newRoot()
    create(root, FileVersion.V2_1)
    val read = latest(fileIO, root)
    val plan = WritePlan.replace(root, Some(read), fields, None, mustCreate = false)
    assert(plan.fileVersion == FileVersion.V2_1)
    WritePlan.replace(root, Some(read), fields, None, mustCreate = false)
      .commit(fileIO, Seq(fragment(root, Seq(7L), FileVersion.V2_1)), CommitOptions())
    val r = plan.commit(fileIO, Seq(fragment(root, Seq(9L), FileVersion.V2_1)), CommitOptions())
    assert(r.version == 3 && ids(fileIO, latest(fileIO, root)) == Seq(9L))
  }

  test("a create racing another create fails and leaves the other's dataset") {
    val root = newRoot()
    val plan = WritePlan.replace(root, None, fields, None, mustCreate = true)
    create(root, FileVersion.V2_2)
    intercept[LanceConcurrentModificationException] {
      plan.commit(fileIO, Seq(fragment(root, Seq(5L))), CommitOptions())
    }
    assert(ids(fileIO, latest(fileIO, root)) == (0L until 3L))
  }
}
