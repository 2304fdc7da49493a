package io.sparklance.table.vector

import org.scalatest.funsuite.AnyFunSuite

/** TopK keeps the k smallest (distance, row id) pairs, ties by row id, as pylance sorts. */
class TopKSuite extends AnyFunSuite {
  test("the k smallest pairs of many, nearest first, ties by row id") {
    val rnd = new scala.util.Random(7)
    for (k <- Seq(1, 3, 10, 100)) {
      val pairs = Seq.fill(1000)((rnd.nextInt(50).toFloat, rnd.nextInt(100000).toLong))
      val top = new TopK(k)
      pairs.foreach { case (d, id) => top.offer(d, id) }
      val want = pairs.sortBy(p => (p._1, p._2)).take(k)
      assert(top.result.toSeq == want)
    }
  }

  test("fewer pairs than k, and merging") {
    val a = new TopK(5)
    Seq((2f, 9L), (1f, 4L)).foreach { case (d, id) => a.offer(d, id) }
    val b = new TopK(5)
    Seq((1f, 3L), (0.5f, 8L), (2f, 1L), (3f, 2L)).foreach { case (d, id) => b.offer(d, id) }
    a.addAll(b)
    assert(a.result.toSeq == Seq((0.5f, 8L), (1f, 3L), (1f, 4L), (2f, 1L), (2f, 9L)))
    assert(intercept[IllegalArgumentException](new TopK(0)).getMessage.contains("k"))
  }

  test("metrics as pylance defines them, and their names") {
    val q = Array(1f, 0f)
    val v = Array(0f, 0f, 3f, 4f)
    assert(VectorMetric.L2.distance(q, v, 2, 2) == 20f)
    assert(VectorMetric.Dot.distance(q, v, 2, 2) == -2f)
    assert(math.abs(VectorMetric.Cosine.distance(q, v, 2, 2) - 0.4f) < 1e-6)
    assert(VectorMetric.Cosine.distance(q, v, 0, 2).isNaN)
    assert(VectorMetric.parse("COSINE") == VectorMetric.Cosine)
    assert(intercept[Exception](VectorMetric.parse("hamming")).getMessage.contains("metric"))
  }
}
