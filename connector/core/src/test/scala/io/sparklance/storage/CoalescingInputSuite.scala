package io.sparklance.storage

import scala.collection.mutable.ArrayBuffer

import org.scalatest.funsuite.AnyFunSuite

/**
 * CoalescingInput over an in-memory file that records its requests: which planned ranges are
 * read together, that nothing is fetched before it is read, and that every read returns the
 * file's own bytes whether it is served from a block or not. (What a scan on S3 sends beside
 * pylance is in tests/test_s3.py.)
 */
class CoalescingInputSuite extends AnyFunSuite {
  private val content: Array[Byte] = Array.tabulate(1 << 22)(i => ((i * 131) ^ (i >>> 7)).toByte)

  private final class Recording extends RandomAccessInput {
    val requests = ArrayBuffer[(Long, Int)]()
    var closed = false
    def path: String = "mem://file"
    def length: Long = content.length
    def read(offset: Long, len: Int): Array[Byte] = {
      val b = new Array[Byte](len)
      readInto(offset, b, 0, len)
      b
    }
    def readInto(offset: Long, dst: Array[Byte], dstOffset: Int, len: Int): Unit = {
      requests += ((offset, len))
      System.arraycopy(content, offset.toInt, dst, dstOffset, len)
    }
    def close(): Unit = closed = true
  }

  private def expect(in: RandomAccessInput, offset: Long, len: Int): Unit = {
    val got = in.read(offset, len)
    assert(
      java.util.Arrays.equals(
        got,
        java.util.Arrays.copyOfRange(content, offset.toInt, offset.toInt + len)
      ),
      s"bytes of [$offset, +$len)"
    )
  }

  test("nearby planned ranges are fetched with one request, when first read") {
    val rec = new Recording
    val in = new CoalescingInput(rec, maxGap = 100, maxBlock = 10000)
    in.plan(Array(1000L, 50L, 1200L, 30L, 1100L, 40L, 5000L, 10L))
    assert(rec.requests.isEmpty, "planning reads nothing")
    expect(in, 1100, 40)
    expect(in, 1000, 50)
    expect(in, 1210, 20) // part of a planned range
    assert(rec.requests == Seq((1000L, 230)))
    expect(in, 5000, 10)
    assert(rec.requests == Seq((1000L, 230), (5000L, 10)))
  }

  test("ranges farther apart than the gap, or past the block size, are separate requests") {
    val rec = new Recording
    val in = new CoalescingInput(rec, maxGap = 100, maxBlock = 300)
    in.plan(Array(0L, 100L, 150L, 100L, 260L, 100L, 1000L, 10L, 2000L, 400L))
    Seq((0L, 100), (150L, 100), (260L, 100), (1000L, 10), (2000L, 400)).foreach {
      case (o, l) => expect(in, o, l)
    }
    // [0,250) fits a block of 300; adding [260,360) would not; 2000+400 exceeds any block.
    assert(rec.requests == Seq((0L, 250), (260L, 100), (1000L, 10), (2000L, 400)))
  }

  test("unplanned reads and reads across a block's end go to the file as they are") {
    val rec = new Recording
    val in = new CoalescingInput(rec, maxGap = 10, maxBlock = 1000)
    in.plan(Array(100L, 100L))
    expect(in, 50, 10)
    expect(in, 150, 100)
    assert(rec.requests == Seq((50L, 10), (150L, 100)))
  }

  test("a block is let go once its planned bytes were read; later reads there are direct") {
    val rec = new Recording
    val in = new CoalescingInput(rec, maxGap = 100, maxBlock = 1000)
    in.plan(Array(0L, 100L, 150L, 100L))
    expect(in, 0, 100)
    expect(in, 150, 100)
    expect(in, 160, 20)
    assert(rec.requests == Seq((0L, 250), (160L, 20)))
  }

  test("held blocks stay within the resident bound, least recently used dropped first") {
    val rec = new Recording
    val in = new CoalescingInput(rec, maxGap = 0, maxBlock = 1000, maxResident = 2000)
    in.plan(Array(0L, 1000L, 5000L, 1000L, 10000L, 1000L))
    expect(in, 0, 10)
    expect(in, 5000, 10)
    expect(in, 10000, 10) // three blocks of 1000 > 2000: the block at 0 goes
    expect(in, 5010, 10)
    expect(in, 10, 10)
    assert(rec.requests == Seq((0L, 1000), (5000L, 1000), (10000L, 1000), (0L, 1000)))
  }

  test("a new plan replaces the old one; close closes the file") {
    val rec = new Recording
    val in = new CoalescingInput(rec, maxGap = 100, maxBlock = 1000)
    in.plan(Array(0L, 100L, 120L, 100L))
    in.plan(Array(3000L, 10L, 3020L, 10L))
    expect(in, 0, 100)
    expect(in, 3020, 10)
    expect(in, 3000, 10)
    assert(rec.requests == Seq((0L, 100), (3000L, 30)))
    in.close()
    assert(rec.closed)
  }

  test("the tail a file was opened with is not planned again") {
    val rec = new Recording
    val co = new CoalescingInput(rec, maxGap = 100, maxBlock = 100000)
    val tailStart = content.length - 1000L
    val tail = co.read(tailStart, 1000)
    val in = new TailCachedInput(co, tailStart, tail)
    in.plan(Array(tailStart + 10, 20L, tailStart - 500, 100L, tailStart - 300, 100L))
    expect(in, tailStart + 10, 20)
    expect(in, tailStart - 500, 100)
    expect(in, tailStart - 300, 100)
    assert(rec.requests == Seq((tailStart, 1000), (tailStart - 500, 300)))
  }
}
