package io.sparklance.storage

/**
 * Reads of a file whose last bytes were already read (`tail`, from `tailStart` to the end):
 * reads inside them are served from memory, the rest go to `input`. A Lance file's opening
 * reads its tail; for a file smaller than that read (small fragments, deletion-heavy tables)
 * the pages are then read with no further request.
 */
final class TailCachedInput(input: RandomAccessInput, tailStart: Long, tail: Array[Byte])
    extends RandomAccessInput {
  override def path: String = input.path
  override def length: Long = input.length

  override def read(offset: Long, len: Int): Array[Byte] =
    if (offset >= tailStart && offset + len <= tailStart + tail.length) {
      val from = (offset - tailStart).toInt
      java.util.Arrays.copyOfRange(tail, from, from + len)
    } else input.read(offset, len)

  override def readInto(offset: Long, dst: Array[Byte], dstOffset: Int, len: Int): Unit =
    if (offset >= tailStart && offset + len <= tailStart + tail.length)
      System.arraycopy(tail, (offset - tailStart).toInt, dst, dstOffset, len)
    else input.readInto(offset, dst, dstOffset, len)

  /** Forwards the ranges the tail does not hold. */
  override def plan(ranges: Array[Long]): Unit = {
    val out = Array.newBuilder[Long]
    var i = 0
    while (i + 1 < ranges.length) {
      if (ranges(i) < tailStart || ranges(i) + ranges(i + 1) > tailStart + tail.length) {
        out += ranges(i)
        out += ranges(i + 1)
      }
      i += 2
    }
    input.plan(out.result())
  }

  override def close(): Unit = input.close()
}
