package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.storage.{HadoopFileIO, Paths}
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.ManifestFile
import io.sparklance.testutil.TinyDatasets._

/** Append through the transaction API: recording, rebasing, conflicts, the transaction log. */
class AppendSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  private def create(root: String, ids: Seq[Long]): CommitResult =
    new Committer(fileIO, root)
      .commit(None, Overwrite(Seq(fragment(root, ids)), fields, Map.empty, None, mustCreate = true))

  test("the transaction is in _transactions and embedded in the manifest, as pylance 14 does") {
    val root = newRoot()
    create(root, 0L until 3L)
    val r = new Committer(fileIO, root)
      .commit(Some(latest(fileIO, root)), Append(Seq(fragment(root, Seq(3L)))))
    val s = latest(fileIO, root)
    val name = s.manifest.getTransactionFile
    assert(name.startsWith("1-") && name.endsWith(".txn"))
    val file = fileIO.readFully(Paths.join(Paths.join(root, "_transactions"), name))
    assert(s.manifest.hasTransactionSection)
    val section = ManifestFile.readSection(fileIO, s.manifestPath, s.manifest.getTransactionSection)
    assert(java.util.Arrays.equals(file, section))
    val t = Transaction.parseFrom(file)
    assert(t.getReadVersion == 1 && t.hasAppend && t.getAppend.getFragments(0).getId == 0)
    assert(r.version == 2)
  }

  test("an append rebases over a concurrent delete; the log lists both operations") {
    val root = newRoot()
    create(root, 0L until 5L)
    val read = latest(fileIO, root)
    TableDelete(fileIO, read, Map(0L -> RoaringBitmap.bitmapOf(1, 2)))
    val r = new Committer(fileIO, root).commit(Some(read), Append(Seq(fragment(root, 5L until 7L))))
    assert(r.version == 3 && r.attempts == 2)
    assert(ids(fileIO, latest(fileIO, root)) == Seq(0L, 3L, 4L, 5L, 6L))
    val log = new TransactionLog(fileIO, root).between(1, 3)
    assert(log.map(c => (c.version, c.operationName)) == Seq((2L, "Delete"), (3L, "Append")))
    assert(log(1).txn.get.getReadVersion == 1) // a rebased transaction keeps its read version
  }

  test("an append fails after a concurrent overwrite, and retries are bounded") {
    val root = newRoot()
    create(root, 0L until 5L)
    val read = latest(fileIO, root)
    new Committer(fileIO, root).commit(
      Some(read),
      Overwrite(Seq(fragment(root, Seq(9L))), fields, Map.empty, None, mustCreate = false)
    )
    val e = intercept[LanceConcurrentModificationException] {
      new Committer(fileIO, root).commit(Some(read), Append(Seq(fragment(root, Seq(5L)))))
    }
    assert(e.getMessage.contains("Append conflicts with the Overwrite committed at version 2"))
    // With no retries allowed, even a compatible concurrent append ends the commit.
    val again = latest(fileIO, root)
    new Committer(fileIO, root).commit(Some(again), Append(Seq(fragment(root, Seq(1L)))))
    val bounded = intercept[LanceConcurrentModificationException] {
      new Committer(fileIO, root, CommitOptions(maxRetries = 0))
        .commit(Some(again), Append(Seq(fragment(root, Seq(2L)))))
    }
    assert(bounded.getMessage.contains("gave up after 1 attempts"))
  }
}
