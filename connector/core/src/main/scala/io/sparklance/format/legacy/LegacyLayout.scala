package io.sparklance.format.legacy

import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.storage.RandomAccessInput
import io.sparklance.proto.{FileProtos, TableProtos}

/**
 * The metadata of a legacy (0.1) file:
 * {{{
 *   data pages | page table | [stats] | [dictionary values] | u32+Manifest | u32+Metadata |
 *   i64 metadata_pos | i16 major | i16 minor | "LANC"
 * }}}
 * `Metadata` gives the batch (row group) boundaries and the page table: an int64 matrix
 * indexed by [field_id - min_field_id][batch] of (position, length) pairs.
 */
final class LegacyLayout(
    val path: String,
    val fileSize: Long,
    val batchOffsets: Array[Long],
    val minFieldId: Int,
    val maxFieldId: Int,
    pageTable: Array[Long],
    /** The file's own schema (from the embedded manifest), by field id; empty if it has none. */
    val ownFields: Map[Int, FileProtos.Field]
) {

  def numBatches: Int = batchOffsets.length - 1
  def numRows: Long = batchOffsets(numBatches)

  def hasPage(fieldId: Int): Boolean = fieldId >= minFieldId && fieldId <= maxFieldId

  /** (position, length) of the page of `fieldId` in `batch`. */
  def pagePosition(fieldId: Int, batch: Int): Long =
    pageTable(((fieldId - minFieldId) * numBatches + batch) * 2)
  def pageLength(fieldId: Int, batch: Int): Long =
    pageTable(((fieldId - minFieldId) * numBatches + batch) * 2 + 1)
}

object LegacyLayout {
  def read(input: RandomAccessInput, tail: Array[Byte], fileFieldIds: Array[Int]): LegacyLayout = {
    val path = input.path
    val size = input.length
    def corrupt(why: String, e: Throwable = null) = LanceErrors.corruptFile(path, why, e)
    if (tail.length < 16)
      throw corrupt(s"file is only ${tail.length} bytes, too short for a legacy footer")
    val tailStart = size - tail.length
    val metaPos = ByteBuffer.wrap(tail, tail.length - 16, 8).order(ByteOrder.LITTLE_ENDIAN).getLong
    if (metaPos < 0 || metaPos > size - 20)
      throw corrupt(s"metadata position $metaPos is outside the file")

    /** A u32-length-prefixed protobuf at `pos`, from the tail when it is there. */
    def message(pos: Long, what: String): Array[Byte] = {
      if (pos < 0 || pos + 4 > size) throw corrupt(s"$what position $pos is outside the file")
      def bytesAt(p: Long, n: Int): Array[Byte] =
        if (p >= tailStart)
          java.util.Arrays.copyOfRange(tail, (p - tailStart).toInt, (p - tailStart).toInt + n)
        else input.read(p, n)
      val len = ByteBuffer.wrap(bytesAt(pos, 4)).order(ByteOrder.LITTLE_ENDIAN).getInt & 0xffffffffL
      if (pos + 4 + len > size)
        throw corrupt(s"$what at $pos claims $len bytes, past the end of the file")
      bytesAt(pos + 4, len.toInt)
    }

    val meta =
      try FileProtos.Metadata.parseFrom(message(metaPos, "metadata"))
      catch {
        case e: com.google.protobuf.InvalidProtocolBufferException =>
          throw corrupt(s"metadata does not decode: ${e.getMessage}", e)
      }
    val batchOffsets = meta.getBatchOffsetsList.asScala.map(_.intValue.toLong).toArray
    if (batchOffsets.isEmpty) throw corrupt("metadata has no batch offsets")
    var i = 1
    while (i < batchOffsets.length) {
      if (batchOffsets(i) < batchOffsets(i - 1))
        throw corrupt(s"batch offsets are not ascending: ${batchOffsets.mkString(",")}")
      i += 1
    }

    val ownFields: Map[Int, FileProtos.Field] =
      if (meta.getManifestPosition == 0) Map.empty
      else {
        val m =
          try TableProtos.Manifest.parseFrom(message(meta.getManifestPosition, "schema manifest"))
          catch {
            case e: com.google.protobuf.InvalidProtocolBufferException =>
              throw corrupt(s"embedded schema does not decode: ${e.getMessage}", e)
          }
        m.getFieldsList.asScala.map(f => f.getId -> f).toMap
      }

    // The writer numbers page-table rows from the smallest field id of the schema it wrote.
    val ids = if (ownFields.nonEmpty) ownFields.keys.toSeq else fileFieldIds.filter(_ >= 0).toSeq
    if (ids.isEmpty) throw corrupt("file holds no fields")
    val minId = ids.min
    val maxId = ids.max
    val numBatches = batchOffsets.length - 1
    val entries = (maxId - minId + 1).toLong * numBatches * 2
    val ptPos = meta.getPageTablePosition
    if (ptPos < 0 || ptPos + entries * 8 > size || entries * 8 > Int.MaxValue)
      throw corrupt(
        s"page table at $ptPos with $entries entries does not fit in the file (size $size)"
      )
    val ptBytes = if (entries == 0) Array.emptyByteArray else input.read(ptPos, (entries * 8).toInt)
    val pageTable = new Array[Long](entries.toInt)
    ByteBuffer.wrap(ptBytes).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(pageTable)
    new LegacyLayout(path, size, batchOffsets, minId, maxId, pageTable, ownFields)
  }
}
