package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.{Expression, Literal}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType}
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{FilterValue, LanceDataset, RowFilter, VersionSpec}
import io.sparklance.testutil.Fixtures

/**
 * Runtime filters (dynamic pruning's IN lists of join keys) as the translator takes them, on
 * the schema of the paged fixture (`id` int64, `x` int32, `s` string): NULL keys dropped, an
 * empty list passing no row, a list with one value it cannot take left whole to Spark, and
 * two translations of the same list equal (how a scan tells runtime filters apart).
 */
class FilterTranslatorSuite extends AnyFunSuite {
  private val schema = LanceDataset.open(
    HadoopFileIO.local(),
    Fixtures.testData.resolve("pages").resolve("paged_2.1.lance").toString
  )
    .open(VersionSpec.Latest).schema
  private val translator = new FilterTranslator(schema, SchemaConverter.toSpark(schema))

  private def in(column: String, values: Expression*): Predicate =
    new Predicate("IN", (LanceScan.column(column) +: values).toArray)
  private def lit(v: Any, dt: DataType): Expression = new Literal[Any] {
    override def value(): Any = v
    override def dataType(): DataType = dt
  }
  private def longs(vs: Long*): Seq[FilterValue] = vs.map(FilterValue.LongValue(_))

  test("a runtime IN list drops its NULL keys and keeps the others in order") {
    val p = in("id", lit(7L, LongType), lit(null, LongType), lit(3L, LongType), lit(null, LongType))
    assert(translator.translateRuntime(p) == Some(RowFilter.In("id", longs(7, 3), false)))
    // The same list without its NULLs translates alike through the general path.
    val plain = in("id", lit(7L, LongType), lit(3L, LongType))
    assert(translator.translateRuntime(p) == translator.translate(plain))
    // The general path takes no NULL in an IN list: the predicate stays with Spark.
    assert(translator.translate(p).isEmpty)
  }

  test("a runtime IN list of no keys, or only NULL ones, passes no row") {
    assert(translator.translateRuntime(in("id")) == Some(RowFilter.Const(false)))
    assert(translator.translateRuntime(in("x", lit(null, IntegerType))) ==
      Some(RowFilter.Const(false)))
  }

  test("string keys and int keys translate into the column's domain") {
    val s = translator.translateRuntime(in(
      "s",
      lit(UTF8String.fromString("k1"), StringType),
      lit(null, StringType)
    ))
    s match {
      case Some(RowFilter.In("s", Seq(FilterValue.BytesValue(b)), false)) =>
        assert(new String(b, "UTF-8") == "k1")
      case other => fail(s"unexpected $other")
    }
    assert(translator.translateRuntime(in("x", lit(5, IntegerType))) ==
      Some(RowFilter.In("x", longs(5), false)))
  }

  test("a runtime IN list with a value it cannot take, or on a column it cannot read, is left") {
    // A literal not of the column's type (Spark coerces both sides; anything else is not ours).
    assert(translator.translateRuntime(in("id", lit(1L, LongType), lit(2, IntegerType))).isEmpty)
    assert(translator.translateRuntime(in("li", lit(1L, LongType))).isEmpty)
    assert(translator.translateRuntime(in("no_such", lit(1L, LongType))).isEmpty)
  }

  test("other runtime predicates translate as pushed ones do") {
    val eq = new Predicate("=", Array(LanceScan.column("id"), lit(4L, LongType)))
    assert(translator.translateRuntime(eq) == translator.translate(eq))
    assert(translator.translateRuntime(eq).isDefined)
  }

  test("translations of the same keys are equal with equal hashes; other keys are not") {
    val keys = (0L until 20000L).map(k => lit(k * 3, LongType))
    val a = translator.translateRuntime(in("id", keys: _*)).get
    val b = translator.translateRuntime(in("id", keys: _*)).get
    assert(a == b && a.hashCode == b.hashCode && !(a eq b))
    val other = translator.translateRuntime(
      in("id", keys.updated(19999, lit(1L, LongType)): _*)
    ).get
    assert(a != other)
    assert(a != translator.translateRuntime(in("x", lit(0, IntegerType))).get)
    assert(RowFilter.In("id", longs(1), negated = true) != RowFilter.In("id", longs(1), false))
    assert(RowFilter.In("x", longs(1), false) != RowFilter.In("id", longs(1), false))
  }
}
