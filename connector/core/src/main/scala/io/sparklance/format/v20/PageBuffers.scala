package io.sparklance.format.v20

import io.sparklance.format.{FileContainer, PageContext}
import io.sparklance.proto.EncodingsV20Protos.Buffer

/**
 * The buffers one 2.0 page can reference: its own page buffers, the column's buffers and the
 * file's global buffers. Each is read with one ranged read the first time an encoding asks for
 * it (so a page costs as many reads as it has buffers, and nothing outside them), after
 * checking it lies inside the file.
 */
final class PageBuffers(
    ctx: PageContext,
    container: FileContainer,
    pagePositions: Array[Long],
    pageSizes: Array[Long],
    columnPositions: Array[Long],
    columnSizes: Array[Long]
) {

  private val pageCache = new Array[Array[Byte]](pagePositions.length)

  def get(b: Buffer): Array[Byte] = {
    val idx = b.getBufferIndex
    b.getBufferType match {
      case Buffer.BufferType.page =>
        ctx.check(
          idx >= 0 && idx < pagePositions.length,
          s"encoding names page buffer $idx but the page has ${pagePositions.length}"
        )
        var bytes = pageCache(idx)
        if (bytes == null) {
          bytes = read(pagePositions(idx), pageSizes(idx), s"page buffer $idx")
          pageCache(idx) = bytes
        }
        bytes
      case Buffer.BufferType.column =>
        ctx.check(
          idx >= 0 && idx < columnPositions.length,
          s"encoding names column buffer $idx but the column has ${columnPositions.length}"
        )
        read(columnPositions(idx), columnSizes(idx), s"column buffer $idx")
      case Buffer.BufferType.file =>
        container.globalBuffer(idx)
      case other => throw ctx.corrupt(s"unknown buffer type $other")
    }
  }

  /**
   * Bytes `[off, off + len)` of a page buffer, reading only those (or copying them out of the
   * buffer when it was read whole already); null for column and file buffers. `minSize` is
   * the size the buffer must have for the page's encoding to be valid.
   */
  def pageRange(b: Buffer, off: Long, len: Int, minSize: Long): Array[Byte] = {
    if (b.getBufferType != Buffer.BufferType.page) return null
    val idx = b.getBufferIndex
    ctx.check(
      idx >= 0 && idx < pagePositions.length,
      s"encoding names page buffer $idx but the page has ${pagePositions.length}"
    )
    val size = pageSizes(idx)
    ctx.check(
      size >= minSize,
      s"page buffer $idx holds $size bytes but the encoding needs $minSize"
    )
    ctx.check(
      off >= 0 && off + len <= size,
      s"range [$off, +$len) outside page buffer $idx of $size bytes"
    )
    val cached = pageCache(idx)
    if (cached != null) java.util.Arrays.copyOfRange(cached, off.toInt, off.toInt + len)
    else if (len == 0) Array.emptyByteArray
    else {
      ctx.check(
        pagePositions(idx) >= 0 && pagePositions(idx) + size <= container.fileSize,
        s"page buffer $idx at (${pagePositions(idx)}, $size) lies outside the file (size ${container.fileSize})"
      )
      container.input.read(pagePositions(idx) + off, len)
    }
  }

  private def read(pos: Long, size: Long, what: String): Array[Byte] = {
    ctx.check(
      pos >= 0 && size >= 0 && pos + size <= container.fileSize,
      s"$what at ($pos, $size) lies outside the file (size ${container.fileSize})"
    )
    ctx.check(size <= Int.MaxValue - 16, s"$what is $size bytes, too large for one array")
    if (size == 0) Array.emptyByteArray else container.input.read(pos, size.toInt)
  }
}
