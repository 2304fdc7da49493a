package io.sparklance.spark.aggregate

import scala.collection.mutable
import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

/**
 * A task's partials, added up as Spark's final aggregation does, against the same aggregation
 * of the input rows: whether the aggregator keeps every group to the end or hands them out at
 * its cap.
 */
class PartialAggregatorSuite extends AnyFunSuite {
  private val d = DecimalType(15, 2)
  private val input = StructType(Seq(
    StructField("k", LongType),
    StructField("s", StringType),
    StructField("d", d),
    StructField("v", LongType)
  ))
  // GROUP BY k, s: count(*), sum(d), min(v).
  private val spec = PartialAggregate(
    input,
    Seq(GroupCol(0, "k", LongType), GroupCol(1, "s", StringType)),
    Seq(
      AggFn.CountAll,
      AggFn.SumOf(PartialExpr.Col(2, "d", NumType(d)), ansi = false),
      AggFn.Extreme(PartialExpr.Col(3, "v", NumType(LongType)), LongType, isMax = false)
    )
  )

  private final case class In(k: Long, s: String, d: Option[Long], v: Long)
  private final case class Agg(count: Long, sum: Option[BigDecimal], min: Long)

  private def data(rows: Int, keys: Int, seed: Int): Seq[In] = {
    val rng = new Random(seed)
    Seq.fill(rows) {
      val key = rng.nextInt(keys)
      // Strings over 7 bytes are kept by the aggregator until it forgets its groups.
      val s = if (key % 7 == 0) null else if (key % 2 == 0) s"s$key" else s"a longer $key"
      In(
        key / 3,
        s,
        if (rng.nextInt(10) == 0) None else Some(rng.nextLong() % 1000000L),
        rng.nextLong() % 1000L
      )
    }
  }

  private def batch(rows: Seq[In]): ColumnarBatch = {
    val cols = input.fields.map(f => new OnHeapColumnVector(rows.size, f.dataType))
    rows.zipWithIndex.foreach { case (r, i) =>
      cols(0).putLong(i, r.k)
      if (r.s == null) cols(1).putNull(i) else cols(1).putByteArray(i, r.s.getBytes("UTF-8"))
      r.d match { case Some(x) => cols(2).putLong(i, x); case None => cols(2).putNull(i) }
      cols(3).putLong(i, r.v)
    }
    new ColumnarBatch(cols.map(c => c: ColumnVector), rows.size)
  }

  private def expected(rows: Seq[In]): Map[(Long, String), Agg] =
    rows.groupBy(r => (r.k, r.s)).map { case (key, rs) =>
      val ds = rs.flatMap(_.d)
      key -> Agg(rs.size, if (ds.isEmpty) None else Some(BigDecimal(ds.sum, 2)), rs.map(_.v).min)
    }

  /** Spark's final aggregation: partials of a group added up (NULL sums skipped). */
  private def merge(out: Seq[InternalRow]): Map[(Long, String), Agg] = {
    val m = mutable.HashMap[(Long, String), Agg]()
    out.foreach { r =>
      val key = (r.getLong(0), if (r.isNullAt(1)) null else r.getUTF8String(1).toString)
      val sum = if (r.isNullAt(3)) None else Some(r.getDecimal(3, 25, 2).toBigDecimal)
      val min = if (r.isNullAt(4)) Long.MaxValue else r.getLong(4)
      val cur = m.getOrElse(key, Agg(0, None, Long.MaxValue))
      val s = (cur.sum ++ sum).reduceOption(_ + _)
      m(key) = Agg(cur.count + r.getLong(2), s, math.min(cur.min, min))
    }
    m.toMap
  }

  /** Feeds `rows` in batches of 500; returns the rows handed out by `add`, then by `result`. */
  private def run(agg: PartialAggregator, rows: Seq[In]): (Seq[InternalRow], Seq[InternalRow]) = {
    val early = rows.grouped(500).flatMap(b => agg.add(batch(b)).map(_.copy()).toList).toList
    (early, agg.result().map(_.copy()).toList)
  }

  test("few groups: all kept to the end, one row each") {
    val rows = data(20000, 30, 1)
    val agg = new PartialAggregator(spec, maxGroups = 1000)
    val (early, last) = run(agg, rows)
    assert(early.isEmpty)
    assert(last.size == expected(rows).size)
    assert(merge(last) == expected(rows))
  }

  test("at the cap the groups are handed out, forgotten, and grouping goes on") {
    for ((keys, seed) <- Seq(300 -> 2, 15000 -> 3)) {
      val rows = data(20000, keys, seed)
      val agg = new PartialAggregator(spec, maxGroups = 100)
      val (early, last) = run(agg, rows)
      // Each batch of 500 rows holds more than 100 groups: every one is handed out after it.
      assert(early.size > expected(rows).size)
      assert(last.isEmpty)
      assert(merge(early ++ last) == expected(rows))
    }
    // A cap reached every few batches: groups handed out along the way and at the end.
    val rows = data(20100, 15000, 4)
    val (early, last) = run(new PartialAggregator(spec, maxGroups = 2000), rows)
    assert(early.nonEmpty)
    assert(last.nonEmpty)
    assert(merge(early ++ last) == expected(rows))
  }

  test("without groups: one row, even for no input") {
    val global = spec.copy(groups = Nil)
    val agg = new PartialAggregator(global, maxGroups = 1)
    val rows = data(3000, 10, 4)
    rows.grouped(500).foreach(b => assert(agg.add(batch(b)).isEmpty))
    val out = agg.result().toList
    assert(out.size == 1 && out.head.getLong(0) == rows.size)
    assert(new PartialAggregator(global).result().toList.map(_.getLong(0)) == List(0L))
  }
}
