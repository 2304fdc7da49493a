package io.sparklance.storage.s3

import io.sparklance.LanceErrors
import io.sparklance.storage.RandomAccessInput

/**
 * Ranged reads of one S3 object. The first request fetches the object's tail with its length
 * (a suffix range), so opening a Lance file and reading its footer costs one GET, not a HEAD
 * and a GET; reads inside that tail are served from it. With the object's size known
 * (`knownSize`, a data file whose metadata is cached), no tail is fetched: each read is its
 * own ranged GET.
 */
final class S3Input(io: S3FileIO, val path: String, knownSize: Long = -1L)
    extends RandomAccessInput {
  private var tail: Array[Byte] = if (knownSize >= 0) Array.emptyByteArray else null
  private var size = knownSize

  private def load(): Unit = if (size < 0) {
    val (bytes, total) = io.tail(path, S3Input.TailBytes)
    tail = bytes
    size = total
  }

  override def length: Long = { load(); size }

  override def read(offset: Long, len: Int): Array[Byte] = {
    val buf = new Array[Byte](len)
    readInto(offset, buf, 0, len)
    buf
  }

  override def readInto(offset: Long, dst: Array[Byte], dstOffset: Int, len: Int): Unit = {
    load()
    if (offset < 0 || len < 0 || offset + len > size)
      throw LanceErrors.corruptFile(
        path,
        s"read of $len bytes at offset $offset is outside the file (size $size bytes)"
      )
    val tailStart = size - tail.length
    if (offset >= tailStart) System.arraycopy(tail, (offset - tailStart).toInt, dst, dstOffset, len)
    else if (len > 0) System.arraycopy(io.readRange(path, offset, len), 0, dst, dstOffset, len)
  }

  override def close(): Unit = tail = null
}

object S3Input {

  /** Enough for a Lance file's footer, column metadata offsets and usually its metadata. */
  val TailBytes: Int = 64 * 1024
}
