package io.sparklance.storage.s3

import java.io.{ByteArrayOutputStream, IOException, OutputStream}

/**
 * A new S3 object written as a stream: bytes are buffered up to the part size; a small object
 * is one conditional PUT at close, a larger one a multipart upload whose parts go as they fill.
 * A failed or abandoned upload is aborted, so no part is left billed in the bucket.
 */
final class S3OutputStream(io: S3FileIO, path: String) extends OutputStream {
  private val partSize = io.config.partSize
  private var buffer = new ByteArrayOutputStream(math.min(partSize, 1 << 20))
  private var uploadId: String = _
  private val etags = scala.collection.mutable.ArrayBuffer[String]()
  private var closed = false
  private var uploaded = 0L

  override def write(b: Int): Unit = {
    buffer.write(b)
    if (buffer.size() >= partSize) flushPart()
  }

  override def write(b: Array[Byte], off: Int, len: Int): Unit = {
    var o = off
    var left = len
    while (left > 0) {
      val n = math.min(left, partSize - buffer.size())
      buffer.write(b, o, n)
      o += n
      left -= n
      if (buffer.size() >= partSize) flushPart()
    }
  }

  private def flushPart(): Unit = guarded {
    if (uploadId == null) uploadId = io.startUpload(path)
    etags += io.uploadPart(path, uploadId, etags.size + 1, buffer.toByteArray)
    uploaded += buffer.size()
    buffer.reset()
  }

  private def guarded[A](body: => A): A =
    try body
    catch {
      case e: Throwable =>
        abort()
        throw e
    }

  private def abort(): Unit = {
    if (uploadId != null) io.abortUpload(path, uploadId)
    uploadId = null
    closed = true
    buffer = null
  }

  override def close(): Unit = if (!closed) {
    if (buffer == null) throw new IOException(s"upload of $path was aborted")
    guarded {
      if (uploadId == null) io.putNew(path, buffer.toByteArray)
      else {
        if (buffer.size() > 0 || etags.isEmpty) flushPart()
        io.completeUpload(path, uploadId, etags.toSeq, uploaded)
      }
    }
    closed = true
    buffer = null
  }
}
