package io.sparklance.storage

import java.io.OutputStream

/**
 * An [[OutputSink]] over any stream (a Hadoop file, a local file, memory). Closing closes the
 * stream.
 */
final class StreamSink(out: OutputStream) extends OutputSink {
  private var pos = 0L
  def position: Long = pos
  def write(b: Array[Byte], off: Int, len: Int): Unit = { out.write(b, off, len); pos += len }
  def close(): Unit = out.close()
}
