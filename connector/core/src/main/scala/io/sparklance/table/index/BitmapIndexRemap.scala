package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}
import java.util.UUID

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table.{DatasetLayout, FeatureFlags, ManifestFile, Snapshot}

/**
 * A BITMAP or LABEL_LIST index rewritten for a compaction, as pylance 14 remaps one inside its
 * Rewrite. The index is one file, `bitmap_page_lookup.lance`: a row per distinct value (or
 * list item: `keys`, null among them) with the addresses of its rows (`bitmaps`, Lance's
 * row-address tree map: a u32 count, then per fragment its id, the byte length of a Roaring
 * bitmap of row offsets — 0 for every row of the fragment — and the bitmap); a LABEL_LIST
 * index keeps the tree map of its null lists in the global buffer `lance:label_list_nulls`
 * names. Addresses in compacted fragments move to their new ones (deleted rows dropped); the
 * rest stay. (With stable row ids pylance keeps these indices as they are: see IndexRemap.)
 * The copy gets a new UUID and covers the old fragments it still has plus the new ones made
 * from fragments it covered.
 */
object BitmapIndexRemap {
  val DetailsType = "/lance.table.BitmapIndexDetails"
  val LabelListDetailsType = "/lance.table.LabelListIndexDetails"
  val LookupFile = "bitmap_page_lookup.lance"
  private val StatsKey = "lance:index_stats"

  /** A LABEL_LIST index's metadata naming the global buffer of its null rows' tree map. */
  private val NullsKey = "lance:label_list_nulls"

  def remappable(i: TableProtos.IndexMetadata): Boolean =
    (i.getIndexDetails.getTypeUrl == DetailsType ||
      i.getIndexDetails.getTypeUrl == LabelListDetailsType) && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty && i.getFilesList.asScala.map(_.getPath).toSet == Set(LookupFile)

  /**
   * Writes the remapped copy of `old` (an index of `s`) and returns its metadata.
   *
   * @param moved old fragment id -> the new address of each of its rows by offset (-1: a
   *              deleted row)
   * @param added the new fragments made from fragments `old` covered
   */
  def apply(
      io: FileIO,
      s: Snapshot,
      old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]],
      added: Seq[Long]
  ): TableProtos.IndexMetadata = {
    val oldPath = Paths.join(
      DatasetLayout.indexDir(s.root, ManifestFile.uuidText(old.getUuid)),
      LookupFile
    )
    val rowIds = (s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0
    val uuid = UUID.randomUUID()
    val path = Paths.join(DatasetLayout.indexDir(s.root, uuid.toString), LookupFile)
    // The file's own schema, metadata and global buffers (a LABEL_LIST index keeps the tree
    // map of its null rows in one), kept as they are but for the row addresses.
    val layout = IndexFileLayout.read(io, oldPath)
    layout.expect("keys", "bitmaps")
    val (fields, metadata) = (layout.fields, layout.metadata)
    val nulls = metadata.get(NullsKey).flatMap(v => scala.util.Try(v.trim.toInt).toOption)
    val newGlobals = layout.globals.zipWithIndex.map { case (b, i) =>
      if (!rowIds && nulls.contains(i + 1)) remap(b, moved, oldPath) else b
    }
    val reader = layout.reader(io)
    val size =
      try {
        val rows = reader.numRows
        val Array(keys, bitmaps) = reader.scan(fields, 0, rows).next(rows.toInt)
        val (newKeys, newBitmaps) = if (rowIds) (keys, bitmaps)
        else {
          val old = bitmaps.asInstanceOf[VarBinaryArray]
          val remapped = (0 until rows.toInt).map { i =>
            val from = old.offsets(i)
            remap(java.util.Arrays.copyOfRange(old.data, from, old.offsets(i + 1)), moved, oldPath)
          }
          // A value none of whose rows is left goes, as pylance drops it.
          val keep = remapped.indices.filter(i => !isEmpty(remapped(i))).toArray
          val out = keep.map(remapped)
          val offsets = out.scanLeft(0)(_ + _.length)
          (
            if (keep.length == rows) keys else ColumnArrays.take(keys, keep),
            new VarBinaryArray(out.length, null, offsets, out.flatten)
          )
        }
        val w = new LanceFileWriter(
          new StreamSink(io.create(path)),
          fields,
          FileVersion.V2_2,
          schemaMetadata = metadata +
            (StatsKey -> s"""{"num_bitmaps":${newKeys.length}}""")
        )
        try {
          w.write(Array(newKeys, newBitmaps))
          w.finish(newGlobals).sizeBytes
        } finally w.close()
      } finally reader.close()
    IndexFileLayout.remappedMetadata(old, uuid, moved, added, Seq(LookupFile -> size))
  }

  /** Whether a row-address tree map holds no fragment (its u32 count is 0). */
  private def isEmpty(treeMap: Array[Byte]): Boolean =
    treeMap.length < 4 || ByteBuffer.wrap(treeMap).order(ByteOrder.LITTLE_ENDIAN).getInt(0) == 0

  /** One value's row-address tree map with the moved fragments' rows at their new addresses. */
  private def remap(
      bytes: Array[Byte],
      moved: Map[Long, Array[Long]],
      file: String
  ): Array[Byte] = {
    val out = new java.util.TreeMap[Long, RoaringBitmap]()
    def add(addr: Long): Unit = {
      val frag = addr >>> 32
      var b = out.get(frag)
      if (b == null) { b = new RoaringBitmap(); out.put(frag, b) }
      b.add((addr & 0xffffffffL).toInt)
    }
    val kept = new java.util.TreeMap[Long, Array[Byte]]() // untouched entries, verbatim
    RowAddrTreeMap.entries(bytes).foreach { case (frag, entry) =>
      moved.get(frag) match {
        case None => kept.put(frag, entry)
        case Some(to) =>
          val offsets: Iterator[Int] = RowAddrTreeMap.offsets(entry, frag, file) match {
            case None => Iterator.range(0, to.length) // every row of the fragment
            case Some(b) => b.iterator().asScala.map(_.intValue)
          }
          offsets.foreach { off =>
            if (off < to.length && to(off) >= 0) add(to(off))
          }
      }
    }
    val entries = new java.util.TreeMap[Long, Array[Byte]](kept)
    // Array and bitmap containers only, as pylance writes them (no run containers, which
    // pylance 14's reader of this index does not take).
    out.asScala.foreach { case (frag, b) =>
      val buf = ByteBuffer.allocate(b.serializedSizeInBytes())
      b.serialize(buf)
      entries.put(frag, buf.array())
    }
    val total = 4 + entries.values.asScala.map(8 + _.length).sum
    val o = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN)
    o.putInt(entries.size)
    entries.asScala.foreach { case (frag, e) => o.putInt(frag.toInt).putInt(e.length).put(e) }
    o.array()
  }
}
