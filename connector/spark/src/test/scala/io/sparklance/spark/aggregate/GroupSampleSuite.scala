package io.sparklance.spark.aggregate

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * The groups per row a sample of a task's first rows predicts for the whole task, against the
 * task's own count of distinct keys, for keys drawn at random from few to very many values.
 */
class GroupSampleSuite extends AnyFunSuite {
  private val SampleRows = 1 << 16

  /** `rows` keys drawn uniformly from `keys` values. */
  private def task(rows: Int, keys: Int, seed: Int): Array[Int] = {
    val rng = new Random(seed)
    Array.fill(rows)(rng.nextInt(keys))
  }

  private def sampleOf(keys: Array[Int]): GroupSample = {
    val counts = scala.collection.mutable.HashMap[Int, Long]()
    keys.iterator.take(SampleRows).foreach(k => counts(k) = counts.getOrElse(k, 0L) + 1)
    GroupSample.of(counts.valuesIterator)
  }

  private def share(keys: Array[Int]): Double = keys.distinct.length.toDouble / keys.length

  for (
    (keys, rows) <- Seq(
      10 -> 300000,
      5000 -> 300000,
      200000 -> 1000000,
      800000 -> 1000000,
      3000000 -> 1000000,
      100000000 -> 1000000,
      1000 -> 20000
    )
  ) {
    test(s"a task of $rows rows of $keys keys") {
      val t = task(rows, keys, keys ^ rows)
      val want = share(t)
      val got = sampleOf(t).groupShare(rows)
      assert(math.abs(got - want) < 0.05, s"estimated $got, the task has $want")
    }
  }

  test("keys seen once and twice") {
    val s = GroupSample.of(Iterator(1L, 1L, 2L, 5L, 1L))
    assert(s == GroupSample(kept = 10, groups = 5, once = 3, twice = 1))
    // Chao1: 5 + 3 * 2 / (2 * 2).
    assert(s.distinctKeys == 6.5)
  }

  test("a sample that keeps no row predicts nothing; one the size of the task is the task") {
    assert(GroupSample.of(Iterator.empty).groupShare(1e6) == 0.0)
    assert(GroupSample.of(Iterator(1L, 1L, 2L)).groupShare(4) == 0.75)
  }

  test("a sample of distinct keys predicts about one group per row in a larger task") {
    val s = GroupSample.of(Iterator.fill(SampleRows)(1L))
    assert(s.groupShare(1e6) > 0.95)
  }
}
