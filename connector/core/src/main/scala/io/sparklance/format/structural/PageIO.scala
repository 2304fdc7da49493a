package io.sparklance.format.structural

import io.sparklance.format.FileContainer

/** Reads of one page's buffers: whole buffers, or byte ranges of them (only what a scan needs). */
private[structural] final class PageIO(
    container: FileContainer,
    offsets: Array[Long],
    sizes: Array[Long],
    ref: PageRef
) {
  def numBuffers: Int = offsets.length
  locally {
    var i = 0
    while (i < offsets.length) {
      ref.check(
        offsets(i) >= 0 && sizes(i) >= 0 && offsets(i) + sizes(i) <= container.fileSize,
        s"buffer $i [${offsets(i)}, +${sizes(i)}) lies outside the file of ${container.fileSize} bytes"
      )
      i += 1
    }
  }
  def bufferSize(i: Int): Long = {
    ref.check(i < offsets.length, s"page has no buffer $i"); sizes(i)
  }
  def buffer(i: Int): Slice = range(i, 0, bufferSize(i))
  def range(i: Int, off: Long, len: Long): Slice = {
    ref.check(i < offsets.length, s"page has no buffer $i")
    ref.check(
      off >= 0 && len >= 0 && off + len <= sizes(i),
      s"range [$off, +$len) exceeds buffer $i of ${sizes(i)} bytes"
    )
    ref.check(len < Int.MaxValue - 16, s"buffer range of $len bytes is too large")
    if (len == 0) new Slice(new Array[Byte](0), 0, 0)
    else
      try Slice.of(container.input.read(offsets(i) + off, len.toInt))
      catch {
        case e: io.sparklance.LanceException => throw e
        case e: java.io.IOException =>
          throw ref.corrupt(s"reading buffer $i failed: ${e.getMessage}", e)
      }
  }
}
