package io.sparklance.table.index

import org.scalatest.funsuite.AnyFunSuite

/**
 * The packed RaBitQ code layout: a round trip for partitions of whole blocks, remainders and
 * both, and taking rows. Its bytes are checked against pylance's own files by CompactionSuite
 * (IVF_RQ remaps).
 */
class RabitCodeBlocksSuite extends AnyFunSuite {
  private def codes(n: Int, len: Int, seed: Int): Array[Byte] = {
    val r = new scala.util.Random(seed)
    Array.fill(n * len)(r.nextInt(256).toByte)
  }

  for (n <- Seq(0, 1, 31, 32, 33, 64, 95); len <- Seq(1, 2, 5)) {
    test(s"$n codes of $len bytes pack and unpack back") {
      val rows = codes(n, len, n * 7 + len)
      val packed = RabitCodeBlocks.pack(rows, n, len)
      assert(packed.length == rows.length)
      assert(RabitCodeBlocks.unpack(packed, n, len).sameElements(rows))
      if (n >= 32) assert(!packed.sameElements(rows))
    }
  }

  test("the first block holds row Perm(j) in byte j's low half, row Perm(j) + 16 in its high") {
    val rows = codes(32, 1, 3)
    val packed = RabitCodeBlocks.pack(rows, 32, 1)
    def lo(r: Int) = rows(r) & 0xf
    def hi(r: Int) = (rows(r) >> 4) & 0xf
    // Byte 1 holds rows 8 and 24 (Perm(1) = 8): low nibbles in byte 1, high ones in byte 17.
    assert((packed(1) & 0xff) == (lo(8) | (lo(24) << 4)))
    assert((packed(17) & 0xff) == (hi(8) | (hi(24) << 4)))
    assert((packed(0) & 0xff) == (lo(0) | (lo(16) << 4)))
  }

  test("taking rows keeps their codes, packed again") {
    val (n, len) = (70, 3)
    val rows = codes(n, len, 5)
    val keep = (0 until n).filter(_ % 3 != 1).toArray
    val taken = RabitCodeBlocks.take(RabitCodeBlocks.pack(rows, n, len), n, len, keep)
    val back = RabitCodeBlocks.unpack(taken, keep.length, len)
    keep.indices.foreach { r =>
      assert(back.slice(r * len, r * len + len).sameElements(
        rows.slice(keep(r) * len, keep(r) * len + len)
      ))
    }
  }
}
