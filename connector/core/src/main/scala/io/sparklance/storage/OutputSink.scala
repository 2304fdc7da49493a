package io.sparklance.storage

/** Where a file writer puts its bytes: an append-only stream that knows its position. */
trait OutputSink extends AutoCloseable {
  def position: Long
  def write(b: Array[Byte], off: Int, len: Int): Unit
  final def write(b: Array[Byte]): Unit = write(b, 0, b.length)
}
