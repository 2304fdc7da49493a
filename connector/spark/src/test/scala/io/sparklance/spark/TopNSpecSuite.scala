package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.{Expression, Expressions, NullOrdering,
  SortDirection, SortOrder}
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

/**
 * Which TopNs a scan takes (plain columns of orderable types, limits up to the cap) and the
 * ordering its tasks keep rows by: Spark's, for directions, null places and NaN. The rows a
 * pushed TopN returns are checked against pylance's in `tests/test_topn_pushdown.py`.
 */
class TopNSpecSuite extends AnyFunSuite {
  private val schema = StructType(Seq(
    StructField("i", IntegerType), StructField("d", DoubleType), StructField("s", StringType),
    StructField("a", ArrayType(IntegerType)), StructField("st", StructType(Seq(
      StructField("x", IntegerType))))))

  private def order(e: Expression, asc: Boolean = true, nullsFirst: Boolean = true): SortOrder =
    Expressions.sort(e, if (asc) SortDirection.ASCENDING else SortDirection.DESCENDING,
      if (nullsFirst) NullOrdering.NULLS_FIRST else NullOrdering.NULLS_LAST)

  private def col(name: String*): Expression = Expressions.column(name.mkString("."))

  test("plain columns of orderable types are taken, in order, with direction and nulls") {
    val spec = TopNSpec.of(Array(order(col("s"), asc = false, nullsFirst = false),
      order(col("i"))), 10, schema)
    assert(spec.contains(TopNSpec(Seq(TopNSpec.Key("s", ascending = false, nullsFirst = false),
      TopNSpec.Key("i", ascending = true, nullsFirst = true)), 10)))
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

  test("the ordering is Spark's: NaN above every number, nulls where asked, keys once each") {
    val rowSchema = StructType(Seq(StructField("d", DoubleType), StructField("i", IntegerType)))
    val rows = Seq[(java.lang.Double, Integer)]((1.0, 2), (Double.NaN, 1), (null, 3),
      (-0.0, 4), (0.0, 0), (Double.NegativeInfinity, 5), (1.0, 1))
      .map { case (d, i) => InternalRow(d, i) }
    def sorted(keys: TopNSpec.Key*): Seq[Int] =
      rows.sorted(TopNSpec(keys, 3).ordering(rowSchema)).map(_.getInt(1))
    // -0.0 and 0.0 are equal: the second key orders them.
    assert(sorted(TopNSpec.Key("d", ascending = true, nullsFirst = true),
      TopNSpec.Key("i", ascending = true, nullsFirst = true)) == Seq(3, 5, 0, 4, 1, 2, 1))
    assert(sorted(TopNSpec.Key("d", ascending = false, nullsFirst = false),
      TopNSpec.Key("i", ascending = false, nullsFirst = false),
      TopNSpec.Key("d", ascending = true, nullsFirst = true)) == Seq(1, 2, 1, 4, 0, 5, 3))
  }
}
