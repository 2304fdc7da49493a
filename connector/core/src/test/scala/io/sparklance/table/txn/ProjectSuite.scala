package io.sparklance.table.txn

import io.sparklance.LanceSchemaMismatchException
import io.sparklance.table.SchemaEdits

/**
 * Our Project against pylance's `drop_columns` and `alter_columns` (rename, nullability):
 * the same schema and field ids, data files of dropped columns gone, indices on dropped
 * columns gone, and the same refusals.
 */
class ProjectSuite extends TwinDatasetSuite {
  private def drop(paths: String*): Project =
    Project(SchemaEdits(latest(ours0)).drop(paths.map(_.split('.').toSeq)))

  // The dataset the operation under test is built from (set per test).
  private var ours0: java.nio.file.Path = _

  private def twinsFor(stable: Boolean = false): (java.nio.file.Path, java.nio.file.Path) = {
    val t = twins(stable); ours0 = t._1; t
  }

  for (stable <- Seq(false, true); cols <- Seq(Seq("n"), Seq("v", "s"), Seq("s.a"))) {
    test(s"dropping ${cols.mkString(", ")} (stable row ids: $stable), as pylance's") {
      val (ours, theirs) = twinsFor(stable)
      commit(ours, _ => drop(cols: _*))
      pylance("drop_columns", theirs, jlist(cols: _*))
      assertTwins(ours, theirs)
    }
  }

  test("a column whose values were rewritten by add_columns loses its data files with it") {
    val (ours, theirs) = twinsFor()
    Seq(ours, theirs).foreach(p => pylance("add_null_columns", p, jlist(jlist("z", "int64"))))
    Seq(ours, theirs).foreach(p => pylance("keep_going", p)) // adds "extra" with data files
    commit(ours, _ => drop("extra"))
    pylance("drop_columns", theirs, jlist("extra"))
    assertTwins(ours, theirs)
  }

  test("dropping an indexed column drops its index, as pylance's") {
    val (ours, theirs) = twinsFor()
    Seq(ours, theirs).foreach(p => pylance("index", p))
    commit(ours, _ => drop("n"))
    pylance("drop_columns", theirs, jlist("n"))
    assertTwins(ours, theirs)
    assert(describe(ours).get("indices").size() == 1)
  }

  for (col <- Seq("v", "s.b")) {
    test(s"renaming $col, as pylance's") {
      val (ours, theirs) = twinsFor()
      commit(ours, s => Project(SchemaEdits(s).rename(col.split('.').toSeq, "renamed")))
      pylance("rename_column", theirs, col, "renamed")
      assertTwins(ours, theirs)
    }
  }

  test("making a non-nullable column nullable, as pylance's") {
    val (ours, theirs) = twinsFor()
    commit(ours, s => Project(SchemaEdits(s).setNullable(Seq("id"), nullable = true)))
    pylance("set_nullable", theirs, "id")
    assertTwins(ours, theirs)
  }

  test("refused with the column named: unknown, every column, a taken name, not-null") {
    val (ours, _) = twinsFor()
    val s = latest(ours)
    def refused(f: => Any, words: String*): Unit = {
      val e = intercept[LanceSchemaMismatchException](f)
      words.foreach(w => assert(e.getMessage.contains(w), e.getMessage))
    }
    refused(SchemaEdits(s).drop(Seq(Seq("nope"))), "'nope'", "id, n, v, s")
    refused(SchemaEdits(s).drop(Seq("id", "n", "v", "s").map(Seq(_))), "every column")
    refused(SchemaEdits(s).drop(Seq(Seq("s", "a"), Seq("s", "b"))), "struct column 's'")
    refused(SchemaEdits(s).rename(Seq("v"), "n"), "'n'", "exists")
    refused(SchemaEdits(s).rename(Seq("v"), "a.b"), "'a.b'")
    refused(SchemaEdits(s).setNullable(Seq("n"), nullable = false), "'n'", "non-nullable")
  }

  test("a Project read before pylance's drop_columns is retryable, as pylance's own") {
    val (ours, theirs) = twinsFor()
    val read = latest(ours)
    val op = drop("v")
    Seq(ours, theirs).foreach(p => pylance("drop_columns", p, jlist("n")))
    val want = pylance("stale", theirs, read.version, "drop_columns", jlist("v")).asText()
    assert(outcome(ours, read, op) == want)
  }
}
