package io.sparklance.spark.aggregate

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

/** The group table against a Scala map, through many rehashes. */
class GroupTableSuite extends AnyFunSuite {
  test("each distinct key gets the next id, and the same key always its own") {
    val rng = new Random(3)
    val t = new GroupTable(3)
    val want = scala.collection.mutable.HashMap[Seq[Long], Int]()
    val probe = new Array[Long](3)
    for (_ <- 0 until 200000) {
      probe(0) = rng.nextInt(50).toLong
      probe(1) = if (rng.nextBoolean()) Long.MinValue else rng.nextLong() % 300
      probe(2) = rng.nextInt(4).toLong
      val key = probe.toList // a copy (2.12's toSeq wraps the reused array)
      val id = t.idOf(probe)
      assert(id == want.getOrElseUpdate(key, want.size))
      assert((0 until 3).map(t.key(id, _)) == key)
    }
    assert(t.size == want.size && want.size > 10000)
  }
}
