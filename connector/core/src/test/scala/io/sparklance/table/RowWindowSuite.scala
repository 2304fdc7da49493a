package io.sparklance.table

import scala.util.Random

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

/**
 * RowWindow.physicalOf against a walk of the fragment's rows: where its k-th live row sits,
 * for random deletions (none, some, runs, all but a few). The windows themselves are checked
 * against pylance's `to_table(offset=, limit=)` in tests/test_limit_pushdown.py.
 */
class RowWindowSuite extends AnyFunSuite {
  private def walked(deleted: RoaringBitmap, rows: Int): IndexedSeq[Long] =
    (0 until rows).filterNot(deleted.contains).map(_.toLong)

  test("the k-th live row is where a walk of the rows finds it, rows past the last") {
    val random = new Random(7)
    for (trial <- 0 until 200) {
      val rows = 1 + random.nextInt(300)
      val share = Seq(0.0, 0.1, 0.5, 0.95)(trial % 4)
      val deleted = new RoaringBitmap()
      (0 until rows).foreach(i => if (random.nextDouble() < share) deleted.add(i))
      if (trial % 10 == 0) deleted.add(0L, math.min(rows, 40).toLong) // a leading run
      val live = walked(deleted, rows)
      for (k <- 0 to live.size + 1) {
        val want = if (k < live.size) live(k) else rows.toLong
        assert(RowWindow.physicalOf(deleted, k, rows) == want, s"rows $rows, k $k")
      }
    }
  }
}
