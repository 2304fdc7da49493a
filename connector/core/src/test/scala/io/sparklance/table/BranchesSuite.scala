package io.sparklance.table

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.maintenance.{CleanupOldVersions, CleanupPolicy}
import io.sparklance.testutil.{HistoryTwins, Pylance}

/**
 * Branches we create read in pylance exactly as the ones its create_branch makes, pylance
 * keeps writing to them, and cleanup of the main branch keeps what they read.
 */
class BranchesSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  private def twins(): (String, String) = HistoryTwins.make("lance-branches-")

  test("create_branch as pylance's; pylance reads and appends to both alike") {
    val (ours, theirs) = twins()
    for (v <- Seq(2L, 5L)) {
      val name = s"b$v"
      val made = Branches.create(fileIO, ours, name, v)
      assert(Pylance.call("branch_ops", "create", theirs, name, v).asText == "ok")
      assert(made.parentVersion == v && made.parentBranch.isEmpty)
      assert(Pylance.call("branch_ops", "describe", ours, name) ==
        Pylance.call("branch_ops", "describe", theirs, name))
      Seq(ours, theirs).foreach(p => Pylance.call("branch_ops", "append", p, name, 3))
      assert(Pylance.call("branch_ops", "describe", ours, name) ==
        Pylance.call("branch_ops", "describe", theirs, name))
    }
    assert(Branches.list(fileIO, ours).map(b => b.name -> b.parentVersion) ==
      Seq("b2" -> 2L, "b5" -> 5L))
    intercept[LanceException](Branches.create(fileIO, ours, "b2", 3))
    intercept[LanceException](Branches.create(fileIO, ours, "a/b", 3))
    intercept[LanceException](Branches.delete(fileIO, ours, "nope"))
  }

  test("a branch of a branch as pylance's; pylance reads and appends to it alike") {
    val (ours, theirs) = twins()
    Branches.create(fileIO, ours, "one", 3)
    assert(Pylance.call("branch_ops", "create", theirs, "one", 3).asText == "ok")
    Seq(ours, theirs).foreach(p => Pylance.call("branch_ops", "append", p, "one", 2))
    val made = Branches.create(fileIO, ours, "two", 4, Some("one"))
    assert(Pylance.call("branch_ops", "create", theirs, "two", 4, "one").asText == "ok")
    assert(made.parentBranch.contains("one") && made.versionMapping.map(_._1) == Seq(3L, 4L))
    assert(Pylance.call("branch_ops", "describe", ours, "two") ==
      Pylance.call("branch_ops", "describe", theirs, "two"))
    Seq(ours, theirs).foreach(p => Pylance.call("branch_ops", "append", p, "two", 3))
    assert(Pylance.call("branch_ops", "describe", ours, "two") ==
      Pylance.call("branch_ops", "describe", theirs, "two"))
    intercept[LanceException](Branches.create(fileIO, ours, "three", 1, Some("nope")))
    // A parent is not deleted while a branch reads its files, as pylance refuses it.
    assert(Pylance.call("branch_ops", "delete", theirs, "one").asText.startsWith("error"))
    intercept[LanceException](Branches.delete(fileIO, ours, "one"))
    assert(Pylance.call("branch_ops", "describe", ours, "two") ==
      Pylance.call("branch_ops", "describe", theirs, "two"))
  }

  test("cleanup of the main branch keeps the version a branch was made from") {
    val (ours, _) = twins()
    Branches.create(fileIO, ours, "dev", 2)
    val before = Pylance.call("branch_ops", "describe", ours, "dev")
    CleanupOldVersions(
      fileIO,
      ours,
      CleanupPolicy(
        Some(scala.concurrent.duration.Duration.Zero),
        None,
        deleteUnverified = true,
        errorIfTaggedOldVersions = false
      )
    )
    assert(LanceDataset.open(fileIO, ours).versions().map(_.version).contains(2L))
    assert(Pylance.call("branch_ops", "describe", ours, "dev") == before)
    Branches.delete(fileIO, ours, "dev")
    assert(Branches.list(fileIO, ours).isEmpty)
    assert(!fileIO.exists(Branches.path(ours, "dev") + "/_versions"))
  }
}
