package io.sparklance.table.txn

import io.sparklance.LanceSchemaMismatchException
import io.sparklance.format.{LanceField, LogicalType}
import io.sparklance.format.writer.SchemaProtos

/**
 * Our column cast (ALTER COLUMN ... TYPE) against pylance's `alter_columns(data_type=...)`:
 * the same schema and field ids, one new data file per fragment holding the cast column, the
 * same rows; pylance keeps going on the result. Narrowing and unsupported casts are refused,
 * naming both types.
 */
class ColumnCastSuite extends TwinDatasetSuite {
  private def addInt32(p: java.nio.file.Path): Unit =
    pylance("add_null_columns", p, jlist(jlist("z", "int32")))

  for (stable <- Seq(false, true)) {
    test(s"an int32 column cast to int64 (stable row ids: $stable), as pylance casts it") {
      val (ours, theirs) = twins(stable)
      Seq(ours, theirs).foreach(addInt32)
      val (merge, written) = ColumnCast.write(fileIO, latest(ours), Seq("z" -> LogicalType.Int64))
      assert(written.size == latest(ours).fragments.size)
      commit(ours, _ => merge)
      pylance("cast_column", theirs, "z", "int64")
      assertTwins(ours, theirs)
    }
  }

  test("narrowing and integer-to-float casts are refused, naming the column and both types") {
    val (ours, _) = twins()
    for (to <- Seq(LogicalType.Int32, LogicalType.Float64)) {
      val e = intercept[LanceSchemaMismatchException](
        ColumnCast.write(fileIO, latest(ours), Seq("n" -> to))
      )
      assert(
        e.getMessage.contains("'n'") && e.getMessage.contains("int64") &&
          e.getMessage.contains(to.text),
        e.getMessage
      )
    }
    assert(latest(ours).version == 3)
  }

  test("supported casts are the widenings pylance makes") {
    import LogicalType._
    assert(ColumnCast.supported(Int8, Int64) && ColumnCast.supported(Int32, Int64))
    assert(ColumnCast.supported(Float32, Float64))
    assert(ColumnCast.supported(Decimal(128, 10, 2), Decimal(128, 13, 4)))
    assert(!ColumnCast.supported(Decimal(128, 10, 2), Decimal(128, 11, 4)))
    assert(!ColumnCast.supported(Int64, Int32) && !ColumnCast.supported(Int32, Float64))
    assert(!ColumnCast.supported(Int64, Int64))
  }
}
