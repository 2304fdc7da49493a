package io.sparklance.table.txn

import java.nio.file.Path

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.table.{SchemaEdits, Snapshot}
import io.sparklance.testutil.{Pylance, TempDirs}

/**
 * The transaction matrix: for every pair (A by us, B by pylance), both started from the same
 * read version and committed B then A, the outcome (commit, retryable conflict, incompatible
 * transaction) and the resulting table must equal what pylance gives for the same pair done
 * by pylance alone (a handle opened at the read version doing A after B). After every
 * committed pair pylance validates the table and keeps appending, deleting and updating.
 *
 * A is one of the operations this connector commits; B is any operation pylance 14 commits.
 * The outcomes, including the pairs pylance itself refuses, are printed as a table at the end.
 */
class TransactionMatrixSuite extends AnyFunSuite with BeforeAndAfterAll {
  import TxnMatrix.{assertSame, describe, fileIO, latest}

  /** Our operations: how each is built from a snapshot, and whether it re-runs on conflict. */
  private case class Ours(
      build: Snapshot => Operation,
      reRuns: Boolean,
      custom: Option[(Path, Snapshot) => Unit] = None
  )

  private val ours: Seq[(String, Ours)] = Seq(
    "append" -> Ours(OurOps.append(_, 200, 5, 1), reRuns = false),
    "delete" -> Ours(OurOps.delete(_, "id = 2"), reRuns = true),
    "update" -> Ours(OurOps.update(_, "id = 4", 1), reRuns = true),
    "update_columns" -> Ours(OurOps.updateColumns(_, "id = 4", 1), reRuns = false),
    "overwrite" -> Ours(OurOps.overwrite(_, 400, 3), reRuns = false),
    "restore" -> Ours(_ => Restore(1), reRuns = false),
    "update_config" -> Ours(
      _ => UpdateConfig(config = Some(UpdateMap.set(Map("k" -> "second")))),
      reRuns = false
    ),
    "drop_columns" -> Ours(s => Project(SchemaEdits(s).drop(Seq(Seq("v")))), reRuns = false),
    "add_null_column" -> Ours(OurOps.addNullColumn(_, "z"), reRuns = false),
    "add_columns" -> Ours(OurOps.addColumnW, reRuns = false),
    "data_replacement" -> Ours(OurOps.replaceFragment0(_, 200), reRuns = false),
    // A BTREE index of id, fed the rows pylance reads at the read version; never re-run.
    "create_index" -> Ours(
      _ => null,
      reRuns = false,
      custom = Some((_, read) => OurOps.createIdIndex(fileIO, read))
    ),
    // ReserveFragments, then a Rewrite read at the planned version (two commits).
    "compact" -> Ours(
      _ => null,
      reRuns = false,
      custom = Some((_, read) => OurOps.compact(fileIO, read))
    )
  )

  private val theirs = Seq(
    "append",
    "delete",
    "update",
    "update_columns",
    "overwrite",
    "create_index",
    "compact",
    "restore",
    "update_config",
    "add_columns",
    "add_null_column",
    "drop_columns",
    "data_replacement"
  )

  private val outcomes = mutable.LinkedHashMap.empty[(String, String), String]

  private def commit(path: Path, read: Snapshot, op: Ours): String = {
    val c = new Committer(fileIO, path.toString)
    try {
      if (op.custom.isDefined) op.custom.get(path, read)
      else if (op.reRuns) c.execute(read)(op.build)
      else c.commit(Some(read), op.build(read))
      "ok"
    } catch {
      case e: LanceConcurrentModificationException =>
        // The class says which it is (PySpark shows the JVM class name).
        assert(e.retryable == e.isInstanceOf[io.sparklance.LanceRetryableConflictException])
        if (e.retryable) "retryable" else "incompatible"
      case _: io.sparklance.LanceException => "error"
    }
  }

  for (stable <- Seq(false, true); b <- theirs; (a, op) <- ours) {
    val ids = if (stable) " (stable row ids)" else ""
    test(s"pylance $b, then our $a from the same version$ids: as pylance alone") {
      val dir = TempDirs.create("lance-matrix-")
      val mine = dir.resolve("ours")
      Pylance.call("txn_matrix", "make", mine.toString, "2.2", stable)
      val ref = TempDirs.copyTree(mine, dir.resolve("theirs"))
      val read = latest(mine)
      Pylance.call("txn_matrix", "prepare", ref.toString, a, "second")
      Seq(mine, ref).foreach(p => Pylance.call("txn_matrix", "run", p.toString, b, "first"))
      val before = describe(mine)
      val expected =
        Pylance.call("txn_matrix", "run_stale", ref.toString, a, "second", read.version)
      val want = expected.get("outcome").asText()
      val got = commit(mine, read, op)
      outcomes((s"$a$ids", b)) = if (got == want) want else s"$want (ours: $got)"
      assert(got == want, s"pylance alone: $expected")
      if (want == "ok") {
        assertSame("result", describe(mine), describe(ref))
        assertSame(
          "after pylance continues",
          Pylance.call("txn_matrix", "keep_going", mine.toString),
          Pylance.call("txn_matrix", "keep_going", ref.toString)
        )
      } else {
        // Nothing committed — but what pylance commits before failing too (a compaction's
        // ReserveFragments).
        assertSame("after the conflict", describe(mine), describe(ref))
        if (a != "compact") assertSame("nothing committed", describe(mine), before)
      }
    }
  }

  override def afterAll(): Unit = {
    if (outcomes.nonEmpty) {
      val rows = outcomes.keys.map(_._1).toSeq.distinct
      val sb = new StringBuilder("Transaction matrix (ours after pylance's, from one version):\n")
      sb.append(("ours \\ pylance" +: theirs).mkString("| ", " | ", " |\n"))
      rows.foreach { r =>
        sb.append((r +: theirs.map(t => outcomes.getOrElse((r, t), "-"))).mkString(
          "| ",
          " | ",
          " |\n"
        ))
      }
      info(sb.toString)
      println(sb.toString)
    }
    super.afterAll()
  }
}
