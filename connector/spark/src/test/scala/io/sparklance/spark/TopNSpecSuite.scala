package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.{
  Expression,
  Expressions,
  NullOrdering,
  SortDirection,
  SortOrder
}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/**
 * Which TopNs a scan takes (plain columns of orderable types, limits up to the cap) and the
 * ordering its tasks keep rows by: Spark's, for directions, null places and NaN. The rows a
 * pushed TopN returns are checked against pylance's in `tests/test_topn_pushdown.py`.
 */
class TopNSpecSuite extends AnyFunSuite {
  private val schema = StructType(Seq(
    StructField("i", IntegerType),
    StructField("d", DoubleType),
    StructField("s", StringType),
    StructField("a", ArrayType(IntegerType)),
    StructField(
      "st",
      StructType(Seq(
        StructField("x", IntegerType)
      ))
    )
  ))

  private def order(e: Expression, asc: Boolean = true, nullsFirst: Boolean = true): SortOrder =
    Expressions.sort(
      e,
      if (asc) SortDirection.ASCENDING else SortDirection.DESCENDING,
      if (nullsFirst) NullOrdering.NULLS_FIRST else NullOrdering.NULLS_LAST
    )

  private def col(name: String*): Expression = Expressions.column(name.mkString("."))

  test("plain columns of orderable types are taken, in order, with direction and nulls") {
    val spec = TopNSpec.of(
      Array(order(col("s"), asc = false, nullsFirst = false), order(col("i"))),
      10,
      schema
    )
    assert(spec.contains(TopNSpec(
      Seq(
        TopNSpec.Key("s", ascending = false, nullsFirst = false),
        TopNSpec.Key("i", ascending = true, nullsFirst = true)
      ),
      10
    )))
    assert(spec.get.describe == "TopN: [s DESC NULLS LAST, i ASC NULLS FIRST] Limit: 10")
  }

  test("expressions, nested fields, unknown and unorderable columns, bad limits are refused") {
    assert(TopNSpec.of(Array(order(col("a"))), 5, schema).isEmpty)
    assert(TopNSpec.of(Array(order(col("st"))), 5, schema).isEmpty)
    assert(TopNSpec.of(Array(order(col("st", "x"))), 5, schema).isEmpty)
    assert(TopNSpec.of(Array(order(col("nope"))), 5, schema).isEmpty)
    assert(TopNSpec.of(Array(order(Expressions.literal(1))), 5, schema).isEmpty)
    assert(TopNSpec.of(Array(order(col("i")), order(col("a"))), 5, schema).isEmpty)
    assert(TopNSpec.of(Array(order(col("i"))), 0, schema).isEmpty)
    assert(TopNSpec.of(Array(order(col("i"))), TopNSpec.MaxRows + 1, schema).isEmpty)
    assert(TopNSpec.of(Array(order(col("i"))), TopNSpec.MaxRows, schema).isDefined)
    assert(TopNSpec.of(Array.empty, 5, schema).isEmpty)
  }

  test("the ordering is Spark's: NaN above every number, -0.0 equal to 0.0, nulls where asked") {
    // The model: stable sorts by each key from the last, nulls and NaN ranked apart from
    // numbers (Spark's SQL ordering of doubles), the direction reversing the numbers only.
    val rowSchema = StructType(Seq(StructField("d", DoubleType), StructField("i", IntegerType)))
    val rnd = new scala.util.Random(3)
    val specials = Seq(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity)
    val values: Seq[(Option[Double], Option[Int])] = Seq.fill(300)((
      if (rnd.nextInt(8) == 0) None
      else if (rnd.nextInt(4) == 0) Some(specials(rnd.nextInt(specials.size)))
      else Some(rnd.nextInt(7).toDouble - 3),
      if (rnd.nextInt(8) == 0) None else Some(rnd.nextInt(5))
    ))
    def model(keys: Seq[TopNSpec.Key]): Seq[(Option[Double], Option[Int])] =
      keys.reverse.foldLeft(values) { (rows, k) =>
        def rank(v: Option[Double]): (Int, Double) = v match {
          case None => (if (k.nullsFirst) -2 else 2, 0.0)
          case Some(x) if x.isNaN => (if (k.ascending) 1 else -1, 0.0)
          case Some(x) => (0, if (k.ascending) x + 0.0 else -(x + 0.0))
        }
        rows.sortBy(r => if (k.column == "d") rank(r._1) else rank(r._2.map(_.toDouble)))(
          Ordering.Tuple2(Ordering.Int, Ordering.fromLessThan[Double](_ < _))
        )
      }
    for {
      cols <- Seq(Seq("d", "i"), Seq("i", "d"), Seq("d", "i", "d"))
      asc <- Seq(true, false)
      nullsFirst <- Seq(true, false)
    } {
      val keys = cols.zipWithIndex.map { case (c, n) =>
        TopNSpec.Key(c, asc == (n % 2 == 0), nullsFirst == (n < 2))
      }
      // Rows hold the key columns in the spec's column order, as the reader's key rows do.
      val spec = TopNSpec(keys, 3)
      val (dAt, iAt) = (spec.columns.indexOf("d"), spec.columns.indexOf("i"))
      val schema = StructType(spec.columns.map(c => rowSchema(c)))
      val rows = values.map { case (d, i) =>
        val cells = new Array[Any](2)
        cells(dAt) = d.map(Double.box).orNull
        cells(iAt) = i.map(Int.box).orNull
        InternalRow.fromSeq(cells.toSeq)
      }
      val got = rows.sorted(spec.ordering(schema)).map { r =>
        (
          if (r.isNullAt(dAt)) None else Some(r.getDouble(dAt)),
          if (r.isNullAt(iAt)) None else Some(r.getInt(iAt))
        )
      }
      val want = model(keys)
      // -0.0 and 0.0 tie: compare them as equal, NaN as NaN.
      def norm(r: (Option[Double], Option[Int])) = (r._1.map(x => (x + 0.0).toString), r._2)
      assert(got.map(norm) == want.map(norm), keys)
    }
  }
}
