package io.sparklance.table.txn

import org.roaringbitmap.RoaringBitmap

import io.sparklance.storage.FileIO
import io.sparklance.table.{LanceDataset, RowFilter, RowMatcher, Snapshot, VersionSpec}

/**
 * The table-level delete: given the rows to delete per fragment (row offsets within the
 * fragment, as a scan of version `read` reports them), commit a Lance Delete that merges
 * them into the fragments' existing deletion vectors.
 */
object TableDelete {
  def apply(
      fileIO: FileIO,
      read: Snapshot,
      rows: Map[Long, RoaringBitmap],
      predicate: String = "",
      options: CommitOptions = CommitOptions()
  ): CommitResult =
    new Committer(fileIO, read.root, options).commit(Some(read), Delete(rows, predicate))

  /**
   * Deletes the rows `filter` matches, from the latest version of the dataset at `root`:
   * matched where they are read, merged into deletion vectors (fragments whose every row
   * matches are dropped whole, nothing written), and, when a concurrent writer changed those
   * fragments, matched again on the newer version, as pylance's `delete` re-runs. A delete
   * that matches nothing still commits a version, as pylance's does.
   */
  def where(
      fileIO: FileIO,
      root: String,
      filter: RowFilter,
      predicate: String,
      options: CommitOptions = CommitOptions()
  ): CommitResult = {
    val read = LanceDataset.open(fileIO, root).open(VersionSpec.Latest)
    new Committer(fileIO, root, options).execute(read) { s =>
      Delete(RowMatcher.matching(fileIO, s, filter), predicate)
    }
  }

  /** Deletes from the latest version of the dataset at `root`. */
  def latest(
      fileIO: FileIO,
      root: String,
      rows: Map[Long, RoaringBitmap],
      predicate: String = "",
      options: CommitOptions = CommitOptions()
  ): CommitResult =
    apply(
      fileIO,
      LanceDataset.open(fileIO, root).open(VersionSpec.Latest),
      rows,
      predicate,
      options
    )
}
