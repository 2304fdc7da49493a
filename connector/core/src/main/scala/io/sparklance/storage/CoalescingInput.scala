package io.sparklance.storage

import java.util.Arrays

/**
 * Ranged reads of a remote file where every request costs a round trip: the byte ranges a scan
 * will read (its pages' buffers, from [[plan]]) are gathered into blocks — ranges at most
 * `maxGap` bytes apart merged, a block at most `maxBlock` bytes — and a read inside a planned
 * block fetches the whole block with one request, so the pages of many small columns cost one
 * request, not one each (as pylance's reader coalesces nearby ranges). A block is fetched when
 * first read, never before (a planned page the scan skips costs nothing unless it shares a
 * block with one it reads), and dropped once the bytes planned in it were read (later reads
 * there go to the file as they are), or when more
 * than `maxResident` bytes of blocks are held (the least recently used first). Reads outside
 * every block, and ranges larger than a block, go to `input` as they are.
 */
final class CoalescingInput(
    input: RandomAccessInput,
    maxGap: Int = CoalescingInput.MaxGap,
    maxBlock: Int = CoalescingInput.MaxBlock,
    maxResident: Long = CoalescingInput.MaxResident
) extends RandomAccessInput {
  import CoalescingInput.Block

  private var blocks: Array[Block] = Array.empty
  private var starts: Array[Long] = Array.emptyLongArray
  private var resident = 0L
  private var clock = 0L

  override def path: String = input.path
  override def length: Long = input.length

  /** Replaces the plan with `ranges`: (offset, length) pairs, in any order. */
  override def plan(ranges: Array[Long]): Unit = synchronized {
    release()
    val n = ranges.length / 2
    val order = (0 until n).filter { i => ranges(2 * i + 1) > 0 && ranges(2 * i + 1) <= maxBlock }
      .sortBy(i => ranges(2 * i)).toArray
    val out = Array.newBuilder[Block]
    var i = 0
    while (i < order.length) {
      val start = ranges(2 * order(i))
      var end = start + ranges(2 * order(i) + 1)
      var planned = end - start
      i += 1
      var more = true
      while (more && i < order.length) {
        val s = ranges(2 * order(i))
        val e = s + ranges(2 * order(i) + 1)
        if (s - end <= maxGap && math.max(e, end) - start <= maxBlock) {
          end = math.max(end, e)
          planned += e - s
          i += 1
        } else more = false
      }
      out += new Block(start, end, planned)
    }
    blocks = out.result()
    starts = blocks.map(_.start)
  }

  override def read(offset: Long, len: Int): Array[Byte] = {
    val buf = new Array[Byte](len)
    readInto(offset, buf, 0, len)
    buf
  }

  override def readInto(offset: Long, dst: Array[Byte], dstOffset: Int, len: Int): Unit = {
    val bytes = synchronized {
      val b = blockOf(offset, len)
      if (b == null) null
      else {
        if (b.bytes == null) load(b)
        clock += 1
        b.lastUse = clock
        val data = b.bytes
        System.arraycopy(data, (offset - b.start).toInt, dst, dstOffset, len)
        b.planned -= len
        if (b.planned <= 0) { drop(b); b.done = true }
        data
      }
    }
    if (bytes == null) input.readInto(offset, dst, dstOffset, len)
  }

  /** The planned block holding all of `[offset, offset + len)`, or null. */
  private def blockOf(offset: Long, len: Int): Block = {
    if (blocks.isEmpty || len <= 0) return null
    var i = Arrays.binarySearch(starts, offset)
    if (i < 0) i = -i - 2
    if (i < 0) return null
    val b = blocks(i)
    if (offset + len <= b.end && !b.done) b else null
  }

  private def load(b: Block): Unit = {
    b.bytes = input.read(b.start, (b.end - b.start).toInt)
    resident += b.bytes.length
    while (resident > maxResident) {
      var lru: Block = null
      blocks.foreach { o =>
        if (o.bytes != null && (o ne b) && (lru == null || o.lastUse < lru.lastUse)) lru = o
      }
      if (lru == null) return
      drop(lru)
    }
  }

  private def drop(b: Block): Unit = if (b.bytes != null) {
    resident -= b.bytes.length
    b.bytes = null
  }

  private def release(): Unit = {
    blocks.foreach(drop)
    blocks = Array.empty
    starts = Array.emptyLongArray
  }

  override def close(): Unit = {
    synchronized(release())
    input.close()
  }
}

object CoalescingInput {

  /** Ranges this close are read together (the bytes between them are read and dropped). */
  val MaxGap: Int = 1 << 20

  /** The largest request a plan makes. */
  val MaxBlock: Int = 16 << 20

  /** Fetched blocks held at once by one open file. */
  val MaxResident: Long = 64L << 20

  private final class Block(val start: Long, val end: Long, var planned: Long) {
    var bytes: Array[Byte] = _
    var lastUse = 0L

    /** Every planned byte was read: later reads inside go to the file as they are. */
    var done = false
  }
}
