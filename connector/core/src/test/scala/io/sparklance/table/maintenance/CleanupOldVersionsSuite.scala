package io.sparklance.table.maintenance

import java.nio.file.Path

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceException
import io.sparklance.format.FileContainer
import io.sparklance.proto.TransactionProtos
import io.sparklance.storage.{HadoopFileIO, Paths}
import io.sparklance.table.{DeletionVector, LanceDataset, ManifestFile, VersionSpec}
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

  /**
   * Walks every kept manifest (each version in `_versions/`, each tag's) and opens every file
   * it names: data files and index files as Lance files, deletion files and index files of
   * other kinds read whole, the transaction file parsed. How many files were opened.
   */
  private def keptFilesOpen(root: Path): Int = {
    val ds = LanceDataset.open(fileIO, root.toString)
    val specs = ds.versions().map(v => VersionSpec.Number(v.version)) ++
      ds.tags().map(t => VersionSpec.TagName(t.name))
    var opened = 0
    def openLance(p: String): Unit = {
      val c = FileContainer.open(fileIO.open(p))
      try assert(c.descriptor != null, p)
      finally c.input.close()
      opened += 1
    }
    def readWhole(p: String): Unit = { assert(fileIO.readFully(p).nonEmpty, p); opened += 1 }
    specs.foreach { spec =>
      val s = ds.open(spec)
      assert(s.manifest.getBasePathsCount == 0, s"$spec: base paths are not walked here")
      s.fragments.foreach { f =>
        f.getFilesList.asScala.foreach { df =>
          openLance(Paths.join(Paths.join(s.root, "data"), df.getPath))
        }
        if (f.hasDeletionFile) readWhole(DeletionVector.path(s.root, f.getId, f.getDeletionFile))
      }
      ManifestFile.indices(fileIO, s).foreach { i =>
        val dir = Paths.join(Paths.join(s.root, "_indices"), ManifestFile.uuidText(i.getUuid))
        val names = i.getFilesList.asScala.map(_.getPath).toSeq
        val listed = if (names.nonEmpty) names
        else fileIO.list(dir).filterNot(_.isDirectory).map(_.name)
        assert(listed.nonEmpty, s"$spec: index ${i.getName} has no files in $dir")
        listed.foreach { n =>
          val p = Paths.join(dir, n)
          if (n.endsWith(".lance") || n.endsWith(".idx")) openLance(p) else readWhole(p)
        }
      }
      if (!s.manifest.getTransactionFile.isEmpty) {
        val p = Paths.join(Paths.join(s.root, "_transactions"), s.manifest.getTransactionFile)
        TransactionProtos.Transaction.parseFrom(fileIO.readFully(p))
        opened += 1
      }
    }
    opened
  }

  private val cases: Seq[(String, CleanupPolicy)] = Seq(
    "older_than=0, tags tolerated" -> CleanupPolicy(
      Some(0.seconds),
      errorIfTaggedOldVersions = false
    ),
    "retain_versions=3" -> CleanupPolicy(None, Some(3), errorIfTaggedOldVersions = false),
    "older_than=0, delete_unverified" -> CleanupPolicy(
      Some(0.seconds),
      None,
      deleteUnverified = true,
      errorIfTaggedOldVersions = false
    ),
    "default two weeks" -> CleanupPolicy()
  )

  for ((what, policy) <- cases; stable <- Seq(false, true)) {
    test(s"cleanup ($what, stable row ids: $stable) leaves what pylance's leaves") {
      Pylance.require()
      val (ours, theirs) = twins(stable)
      val before = files(ours)
      val dry = CleanupOldVersions(fileIO, ours.toString, policy, dryRun = true)
      assert(files(ours) == before)
      val stats = CleanupOldVersions(fileIO, ours.toString, policy)
      val expected = Pylance.call(
        "cleanup_ops",
        "cleanup",
        theirs.toString,
        policy.olderThan.map(_.toSeconds).orNull,
        policy.retainVersions.orNull,
        policy.deleteUnverified,
        policy.errorIfTaggedOldVersions
      )
      assert(!expected.has("error"), expected)
      assert(files(ours) == files(theirs))
      val removed = before.filterNot(files(ours).toSet)
      assert(dry.files.map(p => p.substring(p.indexOf("/ours/") + 6)).sorted == removed.sorted)
      assert(stats.oldVersions == expected.get("old_versions").asLong)
      assert(stats.bytesRemoved == expected.get("bytes_removed").asLong)
      Seq(
        "data_files_removed" -> stats.dataFilesRemoved,
        "transaction_files_removed" -> stats.transactionFilesRemoved,
        "index_files_removed" -> stats.indexFilesRemoved,
        "deletion_files_removed" -> stats.deletionFilesRemoved
      ).foreach { case (k, v) =>
        if (expected.has(k)) assert(v == expected.get(k).asLong, k)
      }
      assert(keptFilesOpen(ours) > 0)
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
