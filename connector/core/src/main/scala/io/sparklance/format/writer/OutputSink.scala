package io.sparklance.format.writer

import java.io.OutputStream

/** Where a file writer puts its bytes: an append-only stream that knows its position. */
trait OutputSink extends AutoCloseable {
  def position: Long
  def write(b: Array[Byte], off: Int, len: Int): Unit
  final def write(b: Array[Byte]): Unit = write(b, 0, b.length)
}

/** An [[OutputSink]] over any stream (a Hadoop file, a local file, memory). Closing closes the stream. */
final class StreamSink(out: OutputStream) extends OutputSink {
  private var pos = 0L
  def position: Long = pos
  def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); pos += len }
  def close(): Unit = out.close()
}
