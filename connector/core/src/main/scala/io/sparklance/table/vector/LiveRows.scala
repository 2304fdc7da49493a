package io.sparklance.table.vector

import io.sparklance.storage.FileIO
import io.sparklance.table.{DeletionVector, FragmentRef, Snapshot}

/**
 * The rows of one table version a search may return, by row address (fragment id << 32 |
 * offset): those of fragments still in the table and not deleted. An index keeps the rows of
 * the fragments it was built on: pylance drops the deleted ones and those of fragments since
 * removed or rewritten from its results (its prefilter), so a search keeps `k` live rows.
 * Deletion files are read on first use, one per fragment.
 */
final class LiveRows(io: FileIO, val fragments: Map[Long, FragmentRef])
    extends Serializable {
  @transient private lazy val deletions =
    scala.collection.mutable.HashMap.empty[Long, DeletionVector]

  def contains(address: Long): Boolean = {
    val frag = address >>> 32
    val offset = address & 0xffffffffL
    fragments.get(frag) match {
      case None => false
      case Some(f) =>
        if (f.physicalRowsTrusted && offset >= f.physicalRows) false
        else if (f.deletionPath.isEmpty) true
        else !deletions.getOrElseUpdate(frag, DeletionVector.read(io, f)).contains(offset.toInt)
    }
  }
}

object LiveRows {
  def apply(io: FileIO, s: Snapshot): LiveRows =
    new LiveRows(io, s.fragments.map(f => f.getId -> FragmentRef(s.root, s, f)).toMap)
}
