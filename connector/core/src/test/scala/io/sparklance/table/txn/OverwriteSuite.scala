package io.sparklance.table.txn

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.FeatureFlags
import io.sparklance.testutil.TinyDatasets._

/** Overwrite through the transaction API: replacing, ids, flags, create races. */
class OverwriteSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  private def overwrite(ids: Seq[Long], root: String, mustCreate: Boolean = false) =
    Overwrite(Seq(fragment(root, ids)), fields, Map.empty, None, mustCreate)

  test("an overwrite replaces deleted rows, clears the deletion flag, continues fragment ids") {
    val root = newRoot()
    new Committer(fileIO, root).commit(None, overwrite(0L until 4L, root, mustCreate = true))
    new Committer(fileIO, root)
      .commit(Some(latest(fileIO, root)), Append(Seq(fragment(root, Seq(4L)))))
    TableDelete.latest(fileIO, root, Map(0L -> RoaringBitmap.bitmapOf(0)))
    assert((latest(fileIO, root).readerFeatureFlags & FeatureFlags.DeletionFiles) != 0)
    val before = latest(fileIO, root).manifest.getMaxFragmentId
    new Committer(fileIO, root).commit(Some(latest(fileIO, root)), overwrite(Seq(7L), root))
    val s = latest(fileIO, root)
    assert(ids(fileIO, s) == Seq(7L))
    // pylance 14 numbers an overwrite's fragments on from max_fragment_id (TransactionMatrix).
    assert(s.fragments.map(_.getId) == Seq(before + 1L))
    assert(s.manifest.getMaxFragmentId == before + 1)
    assert((s.readerFeatureFlags & FeatureFlags.DeletionFiles) == 0)
  }

  test("an overwrite rebases over a concurrent delete; a racing create fails") {
    val root = newRoot()
    new Committer(fileIO, root).commit(None, overwrite(0L until 4L, root, mustCreate = true))
    val read = latest(fileIO, root)
    TableDelete(fileIO, read, Map(0L -> RoaringBitmap.bitmapOf(2)))
    val r = new Committer(fileIO, root).commit(Some(read), overwrite(Seq(8L), root))
    assert(r.attempts == 2 && ids(fileIO, latest(fileIO, root)) == Seq(8L))
    intercept[LanceConcurrentModificationException] {
      new Committer(fileIO, root).commit(None, overwrite(Seq(1L), root, mustCreate = true))
    }
  }
}
