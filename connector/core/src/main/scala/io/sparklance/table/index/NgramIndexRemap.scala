package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}
import java.util.UUID

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table.{DatasetLayout, ManifestFile, Snapshot}

/**
 * An NGRAM index rewritten for a compaction, as pylance 14 remaps one inside its Rewrite
 * (found against pylance 14.0.2). The index is one file, `ngram_postings.lance`: a row per
 * n-gram (`tokens`, its hash) with the addresses of the rows holding it (`posting_list`, a
 * 64-bit Roaring tree map in its portable form: a u64 count, then per fragment its id as u32
 * and a Roaring bitmap of row offsets). Addresses in compacted fragments move to their new
 * ones (deleted rows dropped), the rest stay; an n-gram none of whose rows is left keeps an
 * empty list, as pylance keeps it.
 * The copy gets a new UUID and covers the old fragments it still has plus the new ones made
 * from fragments it covered. (With stable row ids pylance keeps the index: see IndexRemap.)
 */
object NgramIndexRemap {
  val DetailsType = "/lance.table.NGramIndexDetails"
  val PostingsFile = "ngram_postings.lance"

  def remappable(i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == DetailsType && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty &&
      i.getFilesList.asScala.map(_.getPath).toSet == Set(PostingsFile)

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
      PostingsFile
    )
    val uuid = UUID.randomUUID()
    val path = Paths.join(DatasetLayout.indexDir(s.root, uuid.toString), PostingsFile)
    val layout = IndexFileLayout.read(io, oldPath)
    layout.expect("tokens", "posting_list")
    val (fields, metadata, globals) = (layout.fields, layout.metadata, layout.globals)
    val reader = layout.reader(io)
    val size =
      try {
        val rows = reader.numRows.toInt
        val Array(tokens, postings) = reader.scan(fields, 0, rows).next(rows)
        val lists = postings.asInstanceOf[VarBinaryArray]
        val remapped = (0 until rows).map { i =>
          remap(
            java.util.Arrays.copyOfRange(lists.data, lists.offsets(i), lists.offsets(i + 1)),
            moved,
            oldPath
          )
        }
        val out = remapped.toArray
        val w = new LanceFileWriter(
          new StreamSink(io.create(path)),
          fields,
          FileVersion.V2_2,
          schemaMetadata = metadata
        )
        try {
          w.write(Array(
            tokens,
            new VarBinaryArray(out.length, null, out.scanLeft(0)(_ + _.length), out.flatten)
          ))
          w.finish(globals).sizeBytes
        } finally w.close()
      } finally reader.close()
    IndexFileLayout.remappedMetadata(old, uuid, moved, added, Seq(PostingsFile -> size))
  }

  /**
   * One posting list (a portable 64-bit Roaring tree map) with the moved fragments' rows at
   * their new addresses (an empty one when no row is left, which pylance keeps too).
   */
  private def remap(
      bytes: Array[Byte],
      moved: Map[Long, Array[Long]],
      file: String
  ): Array[Byte] = {
    val in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
    val out = new java.util.TreeMap[Long, RoaringBitmap]()
    def bitmapOf(frag: Long) = {
      var b = out.get(frag)
      if (b == null) { b = new RoaringBitmap(); out.put(frag, b) }
      b
    }
    try {
      val n = in.getLong()
      var i = 0L
      while (i < n) {
        val frag = in.getInt() & 0xffffffffL
        val b = new RoaringBitmap()
        b.deserialize(in.slice().order(ByteOrder.LITTLE_ENDIAN))
        in.position(in.position() + b.serializedSizeInBytes())
        moved.get(frag) match {
          case None => bitmapOf(frag).or(b)
          case Some(to) =>
            val it = b.getIntIterator
            while (it.hasNext) {
              val off = it.next()
              if (off < to.length && to(off) >= 0)
                bitmapOf(to(off) >>> 32).add((to(off) & 0xffffffffL).toInt)
            }
        }
        i += 1
      }
    } catch {
      case e: Exception =>
        throw LanceErrors.corruptFile(file, s"a posting list does not decode: ${e.getMessage}", e)
    }
    out.values().removeIf(_.isEmpty)
    val total = 8 + out.values.asScala.map(4 + _.serializedSizeInBytes()).sum
    val o = ByteBuffer.allocate(total).order(ByteOrder.LITTLE_ENDIAN)
    o.putLong(out.size.toLong)
    out.asScala.foreach { case (frag, b) =>
      o.putInt(frag.toInt)
      b.serialize(o)
    }
    o.array()
  }
}
