package io.sparklance.spark

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.{BinaryType, DataType, StringType}
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.testutil.StringArrays._

/**
 * Dictionary arrays written into Spark vectors: Spark reads the right value for every row, and
 * a vector reused for a later batch without a dictionary forgets the old one.
 */
class DictionaryVectorsSuite extends AnyFunSuite {
  private def field(t: LogicalType) = LanceField(1, -1, "s", t, nullable = true, Map.empty, Nil)

  private def read(v: OnHeapColumnVector, n: Int, dt: DataType): Seq[Option[String]] =
    (0 until n).map { i =>
      if (v.isNullAt(i)) None
      else if (dt == StringType) Some(v.getUTF8String(i).toString)
      else Some(new String(v.getBinary(i), UTF_8))
    }

  for (
    (dt, lt) <-
      Seq[(DataType, LogicalType)](StringType -> LogicalType.Utf8, BinaryType -> LogicalType.Binary)
  ) {
    test(
      s"${dt.simpleString}: dictionary, plain and dictionary batches through one reused vector"
    ) {
      val v = new OnHeapColumnVector(16, dt)
      val d = dict("red", "", "日本", "green")
      val batches: Seq[ColumnArray] = Seq(
        dictArray(d, 0, 2, -1, 3, 1, 1, 0),
        plain(Some("x"), None, Some("yz"), Some("")),
        dictArray(dict("a", "b"), 1, 1, 0, -1, 0),
        dictArray(d, 3, 3)
      )
      batches.foreach { a =>
        v.reset()
        ColumnVectorWriter.write(v, field(lt), a)
        assert(v.hasDictionary == a.isInstanceOf[DictionaryArray])
        assert(read(v, a.length, dt) == strings(a))
      }
      v.close()
    }
  }

  test("a dictionary array of a type that is not a string is refused") {
    val v = new OnHeapColumnVector(4, org.apache.spark.sql.types.IntegerType)
    intercept[IllegalStateException](ColumnVectorWriter.write(
      v,
      field(LogicalType.Int32),
      dictArray(dict("a"), 0)
    ))
    v.close()
  }
}
