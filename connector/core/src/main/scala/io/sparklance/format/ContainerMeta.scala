package io.sparklance.format

import java.util.concurrent.atomic.AtomicReferenceArray

import io.sparklance.LanceErrors
import io.sparklance.proto.{File2Protos, FileProtos}

/**
 * What opening a Lance v2 file reads, immutable: its footer, offset tables, column metadata
 * and the bytes of its tail (`tail`, from `tailStart` to the end of the file), which
 * [[FileContainer]] serves reads from. Column metadata and the file descriptor are decoded on
 * first use, once however many containers share this (the decoded protobufs are immutable).
 */
final class ContainerMeta private[format] (
    val path: String,
    val fileSize: Long,
    val footer: FileFooter,
    columnMetadataBytes: Array[Array[Byte]],
    val globalBuffers: Array[(Long, Long)],
    val tailStart: Long,
    val tail: Array[Byte]
) extends FileMetadataCache.Entry {

  private val columns = new AtomicReferenceArray[File2Protos.ColumnMetadata](footer.numColumns)
  @volatile private var descriptorValue: FileProtos.FileDescriptor = _

  def column(index: Int): File2Protos.ColumnMetadata = {
    if (index < 0 || index >= footer.numColumns)
      throw LanceErrors.corruptFile(
        path,
        s"column $index requested but the file has ${footer.numColumns} columns"
      )
    var c = columns.get(index)
    if (c == null) {
      c =
        try File2Protos.ColumnMetadata.parseFrom(columnMetadataBytes(index))
        catch {
          case e: com.google.protobuf.InvalidProtocolBufferException =>
            throw LanceErrors.corruptFile(
              path,
              s"metadata of column $index does not decode: ${e.getMessage}",
              e
            )
        }
      columns.set(index, c)
    }
    c
  }

  /** The file descriptor, decoded from global buffer 0's `bytes` on first use. */
  private[format] def descriptor(bytes: => Array[Byte]): FileProtos.FileDescriptor = {
    var d = descriptorValue
    if (d == null) {
      d =
        try FileProtos.FileDescriptor.parseFrom(bytes)
        catch {
          case e: com.google.protobuf.InvalidProtocolBufferException =>
            throw LanceErrors.corruptFile(
              path,
              s"file descriptor does not decode: ${e.getMessage}",
              e
            )
        }
      descriptorValue = d
    }
    d
  }

  /**
   * The same metadata holding only the part of the tail opening and planning read again:
   * from the first metadata byte or global buffer (the file descriptor) on, or the whole file
   * when it is no larger than one tail read (its pages are then served from memory too).
   */
  def forCache: ContainerMeta = {
    val starts = Iterator(footer.columnMetaStart, footer.cmoTableStart, footer.gboTableStart) ++
      globalBuffers.iterator.map(_._1)
    val keepFrom = if (fileSize <= FileContainer.TailBytes) 0L else math.max(tailStart, starts.min)
    if (keepFrom <= tailStart) this
    else {
      val kept = java.util.Arrays.copyOfRange(tail, (keepFrom - tailStart).toInt, tail.length)
      val out = new ContainerMeta(
        path,
        fileSize,
        footer,
        columnMetadataBytes,
        globalBuffers,
        keepFrom,
        kept
      )
      var i = 0
      while (i < footer.numColumns) { out.columns.set(i, columns.get(i)); i += 1 }
      out.descriptorValue = descriptorValue
      out
    }
  }

  /**
   * About the bytes this holds on the heap: the tail, the column metadata and its decoded
   * protobufs (a few times the encoded size), plus a fixed overhead.
   */
  def weight: Long = 512L + tail.length + 4L * columnMetadataBytes.iterator.map(_.length.toLong).sum
}
