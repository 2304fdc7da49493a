package io.sparklance.format

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, RandomAccessInput, TailCachedInput}
import io.sparklance.proto.{File2Protos, FileProtos}

/**
 * The container of a Lance v2 file: footer, column metadata and global buffers, read with
 * as few requests as possible (one tail read usually covers footer, offset tables and all
 * column metadata) and never the data pages. Pages are read later, per projected column,
 * through `input`, which serves reads inside the tail already read from memory.
 *
 * What opening read is kept apart, in [[ContainerMeta]], so that the files of a table (whose
 * paths are never reused for other contents) are opened once per JVM: see
 * [[FileMetadataCache]].
 */
final class FileContainer private (val meta: ContainerMeta, val input: RandomAccessInput) {
  def path: String = meta.path
  def fileSize: Long = meta.fileSize
  def footer: FileFooter = meta.footer
  def numColumns: Int = footer.numColumns

  def column(index: Int): File2Protos.ColumnMetadata = meta.column(index)

  /** Row spans and buffer bytes of column `index`'s pages, from its metadata alone. */
  def pageSpans(index: Int): ColumnPageSpans = {
    val m = column(index)
    val n = m.getPagesCount
    val starts = new Array[Long](n + 1)
    val bytes = new Array[Long](n)
    var p = 0
    while (p < n) {
      val page = m.getPages(p)
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
      val m = column(c)
      var k = 0
      while (k < math.min(m.getBufferOffsetsCount, m.getBufferSizesCount)) {
        out += m.getBufferOffsets(k)
        out += m.getBufferSizes(k)
        k += 1
      }
      var row = 0L
      var p = 0
      while (p < m.getPagesCount && row < endRow) {
        val page = m.getPages(p)
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

  def numGlobalBuffers: Int = meta.globalBuffers.length

  def globalBuffer(index: Int): Array[Byte] = {
    if (index >= meta.globalBuffers.length)
      throw LanceErrors.corruptFile(
        path,
        s"global buffer $index requested but the file has ${meta.globalBuffers.length}"
      )
    val (pos, len) = meta.globalBuffers(index)
    input.read(pos, len.toInt)
  }

  /** The file's own schema and row count, from global buffer 0 (decoded once per file). */
  def descriptor: FileProtos.FileDescriptor = meta.descriptor(globalBuffer(0))

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
    val metaStart =
      math.min(footer.columnMetaStart, math.min(footer.cmoTableStart, footer.gboTableStart))
    if (metaStart < tailStart) {
      if (size - metaStart > Int.MaxValue - 16)
        throw LanceErrors.corruptFile(
          path,
          s"column metadata starts at $metaStart, " +
            s"${size - metaStart} bytes before the end of the file"
        )
      tail = input.read(metaStart, (size - metaStart).toInt)
      tailStart = metaStart
    }
    def table(start: Long, n: Int, what: String): Array[(Long, Long)] = {
      val b = ByteBuffer.wrap(tail, (start - tailStart).toInt, 16 * n)
        .order(ByteOrder.LITTLE_ENDIAN)
      Array.fill(n) {
        val pos = b.getLong(); val len = b.getLong()
        if (pos < 0 || len < 0 || pos + len > size)
          throw LanceErrors.corruptFile(
            path,
            s"$what entry ($pos, $len) points outside the file (size $size)"
          )
        (pos, len)
      }
    }
    val cmo = table(footer.cmoTableStart, footer.numColumns, "column metadata table")
    val gbo = table(footer.gboTableStart, footer.numGlobalBuffers, "global buffer table")
    val colBytes = cmo.map { case (pos, len) =>
      if (pos >= tailStart) {
        java.util.Arrays.copyOfRange(tail, (pos - tailStart).toInt, (pos - tailStart + len).toInt)
      } else input.read(pos, len.toInt)
    }
    over(new ContainerMeta(path, size, footer, colBytes, gbo, tailStart, tail), input)
  }

  /**
   * The container of the v2 file at `path`, which a manifest records as `size` bytes (0:
   * unknown): its metadata from [[FileMetadataCache]] when held (nothing read), else read and
   * kept ([[keep]]).
   */
  def openKnown(io: FileIO, path: String, size: Long): FileContainer =
    held(io, path, size).getOrElse {
      val c = open(io.open(path))
      keep(c, size)
      c
    }

  /**
   * The container of the file at `path` of the recorded `size`, when [[FileMetadataCache]]
   * holds its metadata: nothing is read until a page is.
   */
  def held(io: FileIO, path: String, size: Long): Option[FileContainer] =
    if (size <= 0) None
    else FileMetadataCache.shared.get(path, size).map(m => over(m, io.openSized(path, size)))

  /**
   * Keeps `c`'s metadata in [[FileMetadataCache]] when its size is `size`, the one a manifest
   * records (a file whose path is never reused for other contents: data and index files).
   */
  def keep(c: FileContainer, size: Long): Unit =
    if (size > 0 && c.fileSize == size) FileMetadataCache.shared.put(c.meta)

  /** A container of a file whose metadata is known (a [[FileMetadataCache]] entry). */
  def over(meta: ContainerMeta, input: RandomAccessInput): FileContainer =
    new FileContainer(meta, new TailCachedInput(input, meta.tailStart, meta.tail))
}
