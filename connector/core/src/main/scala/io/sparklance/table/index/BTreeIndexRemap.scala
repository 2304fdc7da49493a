package io.sparklance.table.index

import java.nio.ByteBuffer
import java.util.UUID

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{DatasetLayout, ManifestFile, Snapshot}

/**
 * A BTREE index rewritten for a compaction, as pylance 14 remaps one inside its Rewrite:
 * every row of the old index whose fragment was compacted gets its new row address (rows
 * deleted before the compaction are dropped), the others keep theirs; values stay in their
 * order. The result is a new index (a new UUID, new files under `_indices/<uuid>/`) with the
 * old one's name, fields, dataset version and index version, covering the old fragments it
 * still has plus the new fragments made from fragments it covered.
 */
object BTreeIndexRemap {

  /** Whether this connector can remap `i`: a BTREE index whose files it knows. */
  def remappable(i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == ScalarIndexes.BTreeDetailsType && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty &&
      i.getFilesList.asScala.map(_.getPath).toSet ==
      Set(BTreeIndexWriter.DataFile, BTreeIndexWriter.LookupFile)

  /**
   * Writes the remapped copy of `old` (an index of `s`) and returns its metadata.
   *
   * @param moved     old fragment id -> the new address of each of its rows by offset (-1: a
   *                  deleted row)
   * @param added     the new fragments made from fragments `old` covered
   */
  def apply(
      io: FileIO,
      s: Snapshot,
      old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]],
      added: Seq[Long]
  ): TableProtos.IndexMetadata = {
    val field = s.schema.byId.getOrElse(
      old.getFields(0),
      throw LanceErrors.corruptFile(
        s.manifestPath,
        s"index ${old.getName} names field ${old.getFields(0)}, which the " +
          "schema lacks"
      )
    )
    val oldDir = DatasetLayout.indexDir(s.root, ManifestFile.uuidText(old.getUuid))
    val uuid = UUID.randomUUID()
    val dir = DatasetLayout.indexDir(s.root, uuid.toString)
    val valueField = LanceField(0, -1, "values", field.logicalType, nullable = true, Map.empty, Nil)
    val idField = LanceField(1, -1, "ids", LogicalType.UInt64, nullable = false, Map.empty, Nil)
    val reader = LanceFileReader.openStandalone(
      io,
      Paths.join(oldDir, BTreeIndexWriter.DataFile),
      FileFields(Array(0, 1), Array(0, 1))
    )
    val writer = new BTreeIndexWriter(io, dir, field.logicalType)
    val files =
      try {
        val rows = reader.numRows
        val scan = reader.scan(Seq(valueField, idField), 0, rows)
        var done = 0L
        while (done < rows) {
          val n = math.min(65536L, rows - done).toInt
          val Array(values, ids) = scan.next(n)
          val kept = remapped(ids.asInstanceOf[FixedWidthArray], moved)
          val keep = kept._1
          if (keep.length == n) writer.add(values, kept._2)
          else if (keep.nonEmpty) writer.add(ColumnArrays.take(values, keep), kept._2)
          done += n
        }
        writer.finish()
      } finally { writer.close(); reader.close() }
    IndexFileLayout.remappedMetadata(old, uuid, moved, added, files)
  }

  /** The kept rows' positions and their new addresses. */
  private[index] def remapped(
      ids: FixedWidthArray,
      moved: Map[Long, Array[Long]]
  ): (Array[Int], Array[Long]) = {
    val bb = ByteBuffer.wrap(ids.data).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val keep = new Array[Int](ids.length)
    val out = new Array[Long](ids.length)
    var k = 0
    var i = 0
    while (i < ids.length) {
      val addr = bb.getLong(i * 8)
      val to = moved.get(addr >>> 32) match {
        case Some(offsets) =>
          val off = (addr & 0xffffffffL).toInt
          if (off < offsets.length) offsets(off) else -1L
        case None => addr
      }
      if (to >= 0) { keep(k) = i; out(k) = to; k += 1 }
      i += 1
    }
    (java.util.Arrays.copyOf(keep, k), java.util.Arrays.copyOf(out, k))
  }
}
