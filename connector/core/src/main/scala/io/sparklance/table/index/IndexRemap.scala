package io.sparklance.table.index

import io.sparklance.proto.TableProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.Snapshot

/**
 * The index kinds whose rows a compaction can move to the rewritten fragments here, as
 * pylance remaps them inside its Rewrite: BTREE ([[BTreeIndexRemap]]) and BITMAP
 * ([[BitmapIndexRemap]]). Fragments covered by any other kind are not compacted.
 */
object IndexRemap {
  def remappable(i: TableProtos.IndexMetadata): Boolean =
    BTreeIndexRemap.remappable(i) || BitmapIndexRemap.remappable(i)

  /** The remapped copy of `old` (see the kinds' objects for `moved` and `added`). */
  def apply(io: FileIO, s: Snapshot, old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]], added: Seq[Long]): TableProtos.IndexMetadata =
    if (BitmapIndexRemap.remappable(old)) BitmapIndexRemap(io, s, old, moved, added)
    else BTreeIndexRemap(io, s, old, moved, added)
}
