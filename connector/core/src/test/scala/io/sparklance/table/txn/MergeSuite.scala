package io.sparklance.table.txn

import io.sparklance.LanceSchemaMismatchException
import io.sparklance.format.{LanceField, LogicalType}
import io.sparklance.format.writer.SchemaProtos
import io.sparklance.table.Snapshot

/**
 * Our Merge adding all-null columns against pylance's `add_columns(pa.field(...))`: the same
 * schema, field ids (numbered past dropped columns, as pylance numbers them), no data
 * written, the rows read as null; and its conflicts as pylance's own.
 */
class MergeSuite extends TwinDatasetSuite {
  private def column(name: String, t: LogicalType): LanceField =
    LanceField(0, -1, name, t, nullable = true, Map.empty, Nil)

  private def addNull(s: Snapshot, cols: (String, LogicalType)*): Merge =
    Merge.addNullColumns(
      s,
      SchemaProtos.toProto(cols.zipWithIndex.map { case ((n, t), i) =>
        column(n, t).copy(id = i)
      })
    )

  private val spec = Seq("z" -> LogicalType.Int32, "w" -> LogicalType.Utf8)
  private def pySpec = jlist(jlist("z", "int32"), jlist("w", "string"))

  for (stable <- Seq(false, true)) {
    test(s"all-null columns added (stable row ids: $stable), as pylance adds them") {
      val (ours, theirs) = twins(stable)
      commit(ours, addNull(_, spec: _*))
      pylance("add_null_columns", theirs, pySpec)
      assertTwins(ours, theirs)
    }
  }

  test("a column added after the last one was dropped gets a new id, as pylance's") {
    val (ours, theirs) = twins()
    Seq(ours, theirs).foreach(p => pylance("drop_columns", p, jlist("s")))
    commit(ours, addNull(_, spec: _*))
    pylance("add_null_columns", theirs, pySpec)
    assertTwins(ours, theirs)
  }

  test("adding a column whose name is taken is refused, naming it") {
    val (ours, _) = twins()
    val e = intercept[LanceSchemaMismatchException](addNull(latest(ours), "v" -> LogicalType.Int32))
    assert(e.getMessage.contains("'v'"))
  }

  for (first <- Seq("keep_going", "drop_columns")) {
    test(s"a Merge read before pylance's $first has pylance's own outcome") {
      val (ours, theirs) = twins()
      val read = latest(ours)
      val op = addNull(read, spec: _*)
      Seq(ours, theirs).foreach { p =>
        if (first == "drop_columns") pylance(first, p, jlist("n")) else pylance(first, p)
      }
      val want = pylance("stale", theirs, read.version, "add_null_columns", pySpec).asText()
      assert(outcome(ours, read, op) == want)
    }
  }
}
