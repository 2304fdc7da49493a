package io.sparklance.table.txn

import org.roaringbitmap.RoaringBitmap

import io.sparklance.storage.FileIO
import io.sparklance.table.{LanceDataset, Snapshot, VersionSpec}

/**
 * The table-level delete: given the rows to delete per fragment (row offsets within the
 * fragment, as a scan of version `read` reports them), commit a Lance Delete that merges
 * them into the fragments' existing deletion vectors.
 */
object TableDelete {
  def apply(fileIO: FileIO, read: Snapshot, rows: Map[Long, RoaringBitmap], predicate: String = "",
      options: CommitOptions = CommitOptions()): CommitResult =
    new Committer(fileIO, read.root, options).commit(Some(read), Delete(rows, predicate))

  /** Deletes from the latest version of the dataset at `root`. */
  def latest(fileIO: FileIO, root: String, rows: Map[Long, RoaringBitmap], predicate: String = "",
      options: CommitOptions = CommitOptions()): CommitResult =
    apply(fileIO, LanceDataset.open(fileIO, root).open(VersionSpec.Latest), rows, predicate,
      options)
}
