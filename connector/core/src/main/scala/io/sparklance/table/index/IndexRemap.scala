package io.sparklance.table.index

import io.sparklance.proto.TableProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.Snapshot

/**
 * What a compaction does to the indices covering the fragments it rewrites, as pylance 14
 * does inside its Rewrite.
 *
 * Without stable row ids, rows move to new addresses: BTREE ([[BTreeIndexRemap]]), BITMAP and
 * LABEL_LIST ([[BitmapIndexRemap]]), NGRAM ([[NgramIndexRemap]]), INVERTED
 * ([[InvertedIndexRemap]]: documents, posting lists, BM25 bounds and token set),
 * IVF_FLAT/IVF_SQ/IVF_PQ/IVF_RQ ([[IvfIndexRemap]]) and IVF_HNSW_SQ/FLAT/PQ
 * ([[IvfHnswIndexRemap]]) indices are rewritten under a new UUID; ZONEMAP and BLOOMFILTER
 * indices are left exactly as they are, as pylance leaves them; fragments covered by any other
 * kind are not compacted here.
 *
 * With stable row ids, rows keep their ids. BTREE indices still hold row addresses (pylance
 * 14) and are rewritten; every kind pylance keeps as it is (found kind by kind against
 * pylance 14.0.2) keeps its UUID and files, and only its fragment bitmap changes: the
 * compacted fragments leave it, and the new fragments join it — except for ZONEMAP and
 * BLOOMFILTER indices, whose zones name fragments, which the new fragments never join.
 * Fragments covered by other kinds are not compacted here.
 */
object IndexRemap {
  private val KeptJoiningNew = Set(
    "/lance.table.BitmapIndexDetails",
    "/lance.table.LabelListIndexDetails",
    "/lance.table.NGramIndexDetails",
    "/lance.table.InvertedIndexDetails",
    "/lance.index.pb.VectorIndexDetails",
    "/lance.table.VectorIndexDetails"
  )
  private val KeptNotJoiningNew =
    Set("/lance.table.ZoneMapIndexDetails", "/lance.index.pb.BloomFilterIndexDetails")

  /**
   * Whether a compaction of a table with stable row ids keeps `i` as it is, editing only its
   * fragment bitmap (then `Some(true)` when the new fragments join it); None when `i` is
   * rewritten or its fragments are not compacted.
   */
  def keptWithStableRowIds(i: TableProtos.IndexMetadata): Option[Boolean] = {
    val url = i.getIndexDetails.getTypeUrl
    if (i.getFragmentBitmap.isEmpty) None
    else if (KeptJoiningNew(url)) Some(true)
    else if (KeptNotJoiningNew(url)) Some(false)
    else None
  }

  /**
   * ZONEMAP and BLOOMFILTER indices, which a compaction without stable row ids leaves exactly
   * as they are in pylance 14 (same UUID, files and fragment bitmap, which still names the
   * compacted fragments: pylance then reads the new fragments as unindexed).
   */
  def untouchedWithoutStableRowIds(i: TableProtos.IndexMetadata): Boolean =
    KeptNotJoiningNew(i.getIndexDetails.getTypeUrl)

  /** Whether the fragments `i` (an index of `s`) covers can be compacted here. */
  def remappable(
      io: FileIO,
      s: Snapshot,
      i: TableProtos.IndexMetadata,
      stableRowIds: Boolean
  ): Boolean =
    if (stableRowIds) BTreeIndexRemap.remappable(i) || keptWithStableRowIds(i).isDefined
    else BTreeIndexRemap.remappable(i) || BitmapIndexRemap.remappable(i) ||
    NgramIndexRemap.remappable(i) || untouchedWithoutStableRowIds(i) ||
    InvertedIndexRemap.remappable(io, s, i) || IvfIndexRemap.remappable(io, s, i) ||
    IvfHnswIndexRemap.remappable(io, s, i)

  /** The remapped copy of `old` (see the kinds' objects for `moved` and `added`). */
  def apply(
      io: FileIO,
      s: Snapshot,
      old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]],
      added: Seq[Long]
  ): TableProtos.IndexMetadata =
    if (BitmapIndexRemap.remappable(old)) BitmapIndexRemap(io, s, old, moved, added)
    else if (BTreeIndexRemap.remappable(old)) BTreeIndexRemap(io, s, old, moved, added)
    else if (NgramIndexRemap.remappable(old)) NgramIndexRemap(io, s, old, moved, added)
    else if (old.getIndexDetails.getTypeUrl == InvertedIndexRemap.DetailsType)
      InvertedIndexRemap(io, s, old, moved, added)
    else if (IvfHnswIndexRemap.remappable(io, s, old)) IvfHnswIndexRemap(io, s, old, moved, added)
    else IvfIndexRemap(io, s, old, moved, added)
}
