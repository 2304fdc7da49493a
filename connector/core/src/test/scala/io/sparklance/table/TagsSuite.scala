package io.sparklance.table

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.testutil.{HistoryTwins, Pylance, TempDirs}

/** Tags we create, move and delete read in pylance exactly as the ones pylance writes. */
class TagsSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  test("create, update and delete tags as pylance does; pylance opens versions by them") {
    val (ours, theirs) = HistoryTwins.make("lance-tags-")
    Tags.create(fileIO, ours, "nightly", 3)
    Pylance.call("tag_ops", "create", theirs, "nightly", 3)
    Tags.create(fileIO, ours, "_x-1.2", 5)
    Pylance.call("tag_ops", "create", theirs, "_x-1.2", 5)
    assert(Pylance.call("tag_ops", "tags", ours) == Pylance.call("tag_ops", "tags", theirs))
    Tags.update(fileIO, ours, "nightly", 6)
    Pylance.call("tag_ops", "update", theirs, "nightly", 6)
    Tags.delete(fileIO, ours, "keep")
    Pylance.call("tag_ops", "delete", theirs, "keep")
    assert(Pylance.call("tag_ops", "tags", ours) == Pylance.call("tag_ops", "tags", theirs))
    assert(Tags.list(fileIO, ours).map(t => t.name -> t.version) ==
      Seq("_x-1.2" -> 5L, "nightly" -> 6L))
  }

  test("names pylance refuses are refused, with pylance's reason; duplicates and missing " +
    "versions fail") {
    Pylance.require()
    val path = TempDirs.create("lance-tags-").resolve("ds").toString
    Pylance.call("cleanup_ops", "make_history", path, false)
    for (bad <- Seq("a/b", "x y", "", "a..b", ".x", "x.", "x.lock")) {
      val theirs = Pylance.call("tag_ops", "create", path, bad, 2).asText
      val e = intercept[LanceException](Tags.create(fileIO, path, bad, 2))
      val reason = theirs.substring(theirs.indexOf("Ref is invalid: ") + 16).trim
      assert(e.getMessage.contains(reason), s"$bad: ${e.getMessage} vs $theirs")
    }
    intercept[LanceException](Tags.create(fileIO, path, "keep", 3))
    intercept[LanceException](Tags.create(fileIO, path, "t99", 99))
    intercept[LanceException](Tags.delete(fileIO, path, "nope"))
    assert(Tags.list(fileIO, path).map(_.name) == Seq("keep"))
  }
}
