package io.sparklance.table.maintenance

import java.nio.file.Path

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.testutil.{Pylance, TempDirs}

/**
 * Our cleanup_old_versions against pylance's on twin copies of a dataset with history
 * (appends, deletes, an update, an index, a tag, an overwrite, stray files of several ages):
 * the same files must remain, the same stats be reported, every kept version and tag read
 * the same in pylance, and pylance keep writing.
 */
class CleanupOldVersionsSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  private def twins(stable: Boolean): (Path, Path) = {
    val dir = TempDirs.create("lance-cleanup-")
    val ours = dir.resolve("ours")
    Pylance.call("cleanup_ops", "make_history", ours.toString, stable)
    val theirs = dir.resolve("theirs")
    Pylance.call("cleanup_ops", "twin", ours.toString, theirs.toString)
    (ours, theirs)
  }

  private def files(p: Path): Seq[String] =
    Pylance.call("cleanup_ops", "files", p.toString).elements().asScala.map(_.asText).toSeq

  private val cases: Seq[(String, CleanupPolicy)] = Seq(
    "older_than=0, tags tolerated" -> CleanupPolicy(Some(0.seconds),
      errorIfTaggedOldVersions = false),
    "retain_versions=3" -> CleanupPolicy(None, Some(3), errorIfTaggedOldVersions = false),
    "older_than=0, delete_unverified" -> CleanupPolicy(Some(0.seconds), None,
      deleteUnverified = true, errorIfTaggedOldVersions = false),
    "default two weeks" -> CleanupPolicy())

  for ((what, policy) <- cases; stable <- Seq(false, true)) {
    test(s"cleanup ($what, stable row ids: $stable) leaves what pylance's leaves") {
      Pylance.require()
      val (ours, theirs) = twins(stable)
      val before = files(ours)
      val dry = CleanupOldVersions(fileIO, ours.toString, policy, dryRun = true)
      assert(files(ours) == before)
      val stats = CleanupOldVersions(fileIO, ours.toString, policy)
      val expected = Pylance.call("cleanup_ops", "cleanup", theirs.toString,
        policy.olderThan.map(_.toSeconds).orNull, policy.retainVersions.orNull,
        policy.deleteUnverified, policy.errorIfTaggedOldVersions)
      assert(!expected.has("error"), expected)
      assert(files(ours) == files(theirs))
      val removed = before.filterNot(files(ours).toSet)
      assert(dry.files.map(p => p.substring(p.indexOf("/ours/") + 6)).sorted == removed.sorted)
      assert(stats.oldVersions == expected.get("old_versions").asLong)
      assert(stats.bytesRemoved == expected.get("bytes_removed").asLong)
      Seq("data_files_removed" -> stats.dataFilesRemoved,
        "transaction_files_removed" -> stats.transactionFilesRemoved,
        "index_files_removed" -> stats.indexFilesRemoved,
        "deletion_files_removed" -> stats.deletionFilesRemoved).foreach { case (k, v) =>
        if (expected.has(k)) assert(v == expected.get(k).asLong, k)
      }
      assert(Pylance.call("cleanup_ops", "readable", ours.toString) ==
        Pylance.call("cleanup_ops", "readable", theirs.toString))
      assert(Pylance.call("cleanup_ops", "keep_going", ours.toString) ==
        Pylance.call("cleanup_ops", "keep_going", theirs.toString))
    }
  }

  test("a tagged version the policy would remove is an error, as in pylance, and nothing goes") {
    Pylance.require()
    val (ours, theirs) = twins(stable = false)
    val before = files(ours)
    val e = intercept[LanceException] {
      CleanupOldVersions(fileIO, ours.toString, CleanupPolicy(Some(0.seconds)))
    }
    val expected = Pylance.call("cleanup_ops", "cleanup", theirs.toString, 0, null, false, true)
    assert(expected.has("error") && expected.get("error").asText.contains("keep"))
    assert(e.getMessage.contains("tagged version") && e.getMessage.contains("\"keep\": 2"))
    assert(files(ours) == before && files(theirs) == before)
  }
}
