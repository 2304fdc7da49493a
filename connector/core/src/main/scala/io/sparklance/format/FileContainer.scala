package io.sparklance.format

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.LanceErrors
import io.sparklance.storage.RandomAccessInput
import io.sparklance.proto.{File2Protos, FileProtos}

/**
 * The container of a Lance v2 file: footer, column metadata and global buffers, read with
 * as few requests as possible (one tail read usually covers footer, offset tables and all
 * column metadata) and never the data pages. Pages are read later, per projected column.
 */
final class FileContainer private (
    val path: String,
    val fileSize: Long,
    val footer: FileFooter,
    columnMetadataBytes: Array[Array[Byte]],
    globalBuffers: Array[(Long, Long)],
    val input: RandomAccessInput) {

  def numColumns: Int = footer.numColumns

  private val columnCache = new Array[File2Protos.ColumnMetadata](footer.numColumns)

  def column(index: Int): File2Protos.ColumnMetadata = {
    if (index < 0 || index >= numColumns)
      throw LanceErrors.corruptFile(path, s"column $index requested but the file has $numColumns columns")
    var c = columnCache(index)
    if (c == null) {
      c = try File2Protos.ColumnMetadata.parseFrom(columnMetadataBytes(index)) catch {
        case e: com.google.protobuf.InvalidProtocolBufferException =>
          throw LanceErrors.corruptFile(path, s"metadata of column $index does not decode: ${e.getMessage}", e)
      }
      columnCache(index) = c
    }
    c
  }

  /** Row spans and buffer bytes of column `index`'s pages, from its metadata alone. */
  def pageSpans(index: Int): ColumnPageSpans = {
    val meta = column(index)
    val n = meta.getPagesCount
    val starts = new Array[Long](n + 1)
    val bytes = new Array[Long](n)
    var p = 0
    while (p < n) {
      val page = meta.getPages(p)
      val len = page.getLength
      if (len < 0) throw LanceErrors.corruptFile(path, s"column $index page $p declares $len rows")
      starts(p + 1) = starts(p) + len
      var b = 0L
      var k = 0
      while (k < page.getBufferSizesCount) { b += page.getBufferSizes(k); k += 1 }
      bytes(p) = b
      p += 1
    }
    ColumnPageSpans(index, starts, bytes)
  }

  /**
   * Plans the reads of `columns` over rows `[startRow, endRow)` with the input: their column
   * buffers and the buffers of their pages holding any of those rows (see
   * `RandomAccessInput.plan`).
   */
  def planReads(columns: Seq[Int], startRow: Long, endRow: Long): Unit = {
    val out = Array.newBuilder[Long]
    columns.distinct.foreach { c =>
      val meta = column(c)
      var k = 0
      while (k < math.min(meta.getBufferOffsetsCount, meta.getBufferSizesCount)) {
        out += meta.getBufferOffsets(k)
        out += meta.getBufferSizes(k)
        k += 1
      }
      var row = 0L
      var p = 0
      while (p < meta.getPagesCount && row < endRow) {
        val page = meta.getPages(p)
        val next = row + page.getLength
        if (next > startRow || page.getLength == 0) {
          k = 0
          while (k < math.min(page.getBufferOffsetsCount, page.getBufferSizesCount)) {
            out += page.getBufferOffsets(k)
            out += page.getBufferSizes(k)
            k += 1
          }
        }
        row = next
        p += 1
      }
    }
    input.plan(out.result())
  }

  def numGlobalBuffers: Int = globalBuffers.length

  def globalBuffer(index: Int): Array[Byte] = {
    if (index >= globalBuffers.length)
      throw LanceErrors.corruptFile(path, s"global buffer $index requested but the file has ${globalBuffers.length}")
    val (pos, len) = globalBuffers(index)
    input.read(pos, len.toInt)
  }

  /** The file's own schema and row count, from global buffer 0. */
  lazy val descriptor: FileProtos.FileDescriptor =
    try FileProtos.FileDescriptor.parseFrom(globalBuffer(0)) catch {
      case e: com.google.protobuf.InvalidProtocolBufferException =>
        throw LanceErrors.corruptFile(path, s"file descriptor does not decode: ${e.getMessage}", e)
    }

  def numRows: Long = descriptor.getLength
}

object FileContainer {
  val TailBytes: Int = 64 * 1024

  def open(input: RandomAccessInput): FileContainer = {
    val size = input.length
    val tailLen = math.min(size, TailBytes.toLong).toInt
    open(input, input.read(size - tailLen, tailLen))
  }

  /** Opens with the file's last `tail.length` bytes already read (e.g. by version dispatch). */
  def open(input: RandomAccessInput, initialTail: Array[Byte]): FileContainer = {
    val path = input.path
    val size = input.length
    var tailStart = size - initialTail.length
    var tail = initialTail
    val footer = FileFooter.parse(tail, size, path)
    // Column metadata, then the CMO table, then the GBO table, then the footer: widen the
    // tail once if the metadata starts before it.
    val metaStart = math.min(footer.columnMetaStart, math.min(footer.cmoTableStart, footer.gboTableStart))
    if (metaStart < tailStart) {
      if (size - metaStart > Int.MaxValue - 16)
        throw LanceErrors.corruptFile(path, s"column metadata starts at $metaStart, ${size - metaStart} bytes before the end of the file")
      tail = input.read(metaStart, (size - metaStart).toInt)
      tailStart = metaStart
    }
    def table(start: Long, n: Int, what: String): Array[(Long, Long)] = {
      val b = ByteBuffer.wrap(tail, (start - tailStart).toInt, 16 * n).order(ByteOrder.LITTLE_ENDIAN)
      Array.fill(n) {
        val pos = b.getLong(); val len = b.getLong()
        if (pos < 0 || len < 0 || pos + len > size)
          throw LanceErrors.corruptFile(path, s"$what entry ($pos, $len) points outside the file (size $size)")
        (pos, len)
      }
    }
    val cmo = table(footer.cmoTableStart, footer.numColumns, "column metadata table")
    val gbo = table(footer.gboTableStart, footer.numGlobalBuffers, "global buffer table")
    val colBytes = cmo.map { case (pos, len) =>
      if (pos >= tailStart) java.util.Arrays.copyOfRange(tail, (pos - tailStart).toInt, (pos - tailStart + len).toInt)
      else input.read(pos, len.toInt)
    }
    new FileContainer(path, size, footer, colBytes, gbo,
      new io.sparklance.storage.TailCachedInput(input, tailStart, tail))
  }
}
