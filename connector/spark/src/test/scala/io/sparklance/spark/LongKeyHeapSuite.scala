package io.sparklance.spark

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/**
 * The rows a [[LongKeyHeap]] keeps hold the first `limit` keys of a full sort, nulls placed
 * as asked, for keys in random, ascending and descending order, with ties and nulls.
 */
class LongKeyHeapSuite extends AnyFunSuite {
  private def firstKeys(
      keys: Seq[Option[Long]],
      limit: Int,
      asc: Boolean,
      nullsFirst: Boolean
  ): Seq[Option[Long]] = {
    val values = keys.flatten.sorted
    val nulls = keys.filter(_.isEmpty)
    val ordered = if (asc) values else values.reverse
    ((if (nullsFirst) nulls else Nil) ++ ordered.map(Some(_)) ++
      (if (nullsFirst) Nil else nulls)).take(limit)
  }

  private def kept(
      keys: Seq[Option[Long]],
      limit: Int,
      asc: Boolean,
      nullsFirst: Boolean
  ): Seq[Option[Long]] = {
    val heap = new LongKeyHeap(limit, asc, nullsFirst)
    keys.zipWithIndex.foreach { case (k, i) => heap.offer(k.isEmpty, k.getOrElse(0L), i) }
    heap.rowAddresses.toSeq.map(a => keys(a.toInt))
  }

  private def sameKeys(a: Seq[Option[Long]], b: Seq[Option[Long]]): Boolean =
    a.groupBy(identity).map { case (k, v) => k -> v.size } ==
      b.groupBy(identity).map { case (k, v) => k -> v.size }

  test("the first keys of a full sort, every direction and null place, every input order") {
    val rnd = new Random(5)
    for {
      n <- Seq(0, 1, 7, 100, 5000)
      limit <- Seq(1, 3, 10, 250)
      asc <- Seq(true, false)
      nullsFirst <- Seq(true, false)
      shape <- Seq("random", "ascending", "descending")
    } {
      val raw = Seq.fill(n)(if (rnd.nextInt(10) == 0) None
      else Some(rnd.nextInt(60).toLong - 30 + (if (rnd.nextBoolean()) Long.MinValue / 2 else 0)))
      val keys = shape match {
        case "random" => raw
        case "ascending" => raw.sortBy(_.getOrElse(Long.MinValue))
        case _ => raw.sortBy(_.getOrElse(Long.MinValue)).reverse
      }
      val want = firstKeys(keys, limit, asc, nullsFirst)
      val got = kept(keys, limit, asc, nullsFirst)
      assert(sameKeys(got, want), s"n=$n limit=$limit asc=$asc nullsFirst=$nullsFirst $shape")
    }
  }

  test("a limit must be positive") {
    intercept[IllegalArgumentException](new LongKeyHeap(0, ascending = true, nullsFirst = true))
  }
}
