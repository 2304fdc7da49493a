package io.sparklance.table

import io.sparklance.storage.FileIO

/**
 * Row counts from metadata. Modern manifests record each fragment's physical rows and
 * deleted rows, so a dataset's count needs no file at all. Manifests of old Lance releases
 * may leave either at 0: then the deletion file (not a data file) is read for its
 * cardinality, and, for physical rows, the data file's footer. Like pylance, recorded
 * physical rows are trusted only when the manifest names its writer: some early writers
 * stored the count after deletions there.
 */
object RowCounts {
  def physicalRows(io: FileIO, f: FragmentRef): Long =
    if ((f.physicalRows > 0 && f.physicalRowsTrusted) || f.files.isEmpty) f.physicalRows
    else {
      val df = f.files.head
      val r = df.open(io)
      try r.numRows
      finally r.close()
    }

  def deletedRows(io: FileIO, f: FragmentRef): Long =
    if (f.deletionPath.isEmpty) 0L
    else if (f.numDeletedRows > 0) f.numDeletedRows
    else DeletionVector.read(io, f).cardinality

  def liveRows(io: FileIO, f: FragmentRef): Long = physicalRows(io, f) - deletedRows(io, f)

  def count(io: FileIO, snapshot: Snapshot): Long =
    snapshot.fragments.map(fr => liveRows(io, FragmentRef(snapshot.root, snapshot, fr))).sum
}
