package io.sparklance.storage

/** Ranged reads of one open file. */
trait RandomAccessInput extends AutoCloseable {
  def path: String
  def length: Long
  def read(offset: Long, length: Int): Array[Byte]

  /** Reads `length` bytes at `offset` into `dst` starting at `dstOffset`. */
  def readInto(offset: Long, dst: Array[Byte], dstOffset: Int, length: Int): Unit

  /**
   * The byte ranges ((offset, length) pairs) the next reads will ask for, so that a remote
   * store can read nearby ones with one request ([[CoalescingInput]]); ignored by default.
   */
  def plan(ranges: Array[Long]): Unit = ()
}
