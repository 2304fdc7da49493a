package io.sparklance.table

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.table.FilterValue.{BytesValue, DoubleValue, LongValue}

/** [[RowFilter]] trees as tasks receive them: through Java serialization. */
class RowFilterSuite extends AnyFunSuite {
  private def serialized(f: RowFilter): Array[Byte] = {
    val bytes = new java.io.ByteArrayOutputStream()
    val out = new java.io.ObjectOutputStream(bytes)
    out.writeObject(f)
    out.close()
    bytes.toByteArray
  }

  private def roundTrip(f: RowFilter): RowFilter =
    new java.io.ObjectInputStream(new java.io.ByteArrayInputStream(serialized(f))).readObject()
      .asInstanceOf[RowFilter]

  test("IN lists of every kind of value come back equal, inside other nodes too") {
    val lists = Seq(
      Seq(LongValue(3), LongValue(-1), LongValue(Long.MaxValue)),
      Seq(DoubleValue(1.5), DoubleValue(Double.NaN)),
      Seq(BytesValue("a".getBytes), BytesValue(Array.emptyByteArray)),
      Seq(LongValue(1), DoubleValue(2.0)),
      Nil
    )
    for (values <- lists; negated <- Seq(false, true)) {
      val in = RowFilter.In("c", values, negated)
      val back = roundTrip(RowFilter.And(in, RowFilter.IsNull("d", negated = true)))
      val RowFilter.And(b: RowFilter.In, _) = back
      assert(b.column == "c" && b.negated == negated)
      // Byte values compare by content.
      assert(b.values.map(_.toString) == values.map(_.toString))
    }
  }

  test("a runtime filter of many join keys is serialized as an array of longs") {
    val n = 100000
    val in = RowFilter.In("k", (0 until n).map(i => LongValue(i * 7L)), negated = false)
    val bytes = serialized(in).length
    // About 8 bytes a value (each as an object would take about 14).
    assert(bytes < 9L * n, s"$bytes bytes for $n values")
    assert(roundTrip(in) == in)
  }
}
