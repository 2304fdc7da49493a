package io.sparklance.table.vector

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceInvalidOptionException

/** The per-query pieces of batch k-NN: query checks and merging tops. */
class KnnBatchSuite extends AnyFunSuite {
  test("merging two tops keeps the k nearest, ties by row id, as one top of everything") {
    val rnd = new scala.util.Random(11)
    for (k <- Seq(1, 4, 20)) {
      val a = Seq.fill(30)((rnd.nextInt(10).toFloat, rnd.nextInt(1000).toLong)).distinct
      val b = Seq.fill(30)((rnd.nextInt(10).toFloat, 1000L + rnd.nextInt(1000))).distinct
      val merged =
        KnnBatch.merge(KnnBatch.topOf(a.toArray, k).result, KnnBatch.topOf(b.toArray, k).result, k)
      assert(merged.toSeq == (a ++ b).sortBy(p => (p._1, p._2)).take(k))
    }
    val one = Array((1f, 2L))
    assert(KnnBatch.merge(one, Array.empty, 3).toSeq == one.toSeq)
    assert(KnnBatch.merge(Array.empty, one, 3).toSeq == one.toSeq)
  }

  test("a query of the wrong length is named by its row and the query column") {
    KnnBatch.check(Array(Array(1f, 2f), null, Array(3f, 4f)), 2, "q", "emb")
    val e = intercept[LanceInvalidOptionException](
      KnnBatch.check(Array(Array(1f, 2f), null, Array(3f)), 2, "q", "emb")
    )
    assert(
      e.getMessage.contains("query row 2") && e.getMessage.contains("'q'") &&
        e.getMessage.contains("emb holds vectors of 2"),
      e.getMessage
    )
  }
}
