package io.sparklance.table.txn

import java.io.{BufferedReader, InputStreamReader}
import java.nio.file.Path
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.storage.FileIO
import io.sparklance.table.Snapshot
import io.sparklance.table.commit.CommitPauses
import io.sparklance.testutil.{DefaultLineOnly, Pylance, TempDirs}

/**
 * A writer killed at any point of a commit leaves the old version or the new one, nothing in
 * between: for each of our operations and each pause point, a child JVM commits the
 * operation and is killed while it waits there; pylance must then read exactly the table as
 * it was before (or, killed after the manifest, as pylance's own operation makes it),
 * validate it, and keep appending, deleting and updating; our next commit must succeed. A
 * compaction commits twice (ReserveFragments, then the Rewrite): each commit is killed at
 * each point; between the two the table is the old one a version on.
 */
@DefaultLineOnly
class KillAtCommitSuite extends AnyFunSuite {
  import TxnMatrix.describe

  /** Runs KillableCommit, waits until it pauses at `point`, and kills it. */
  private def killAt(kind: String, path: Path, point: String, nth: Int): Unit = {
    val javaBin = java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "java").toString
    // Arrow (deletion files) needs the module openings this test JVM was started with.
    val opens = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments
      .asScala.filter(a => a.startsWith("--add-opens") || a.startsWith("--add-exports"))
    val cmd = Seq(
      javaBin,
      s"-D${CommitPauses.Property}=$point@$nth:600000",
      "-Dsparklance.python=" + Pylance.python
    ) ++ opens ++ Seq(
      "-cp",
      System.getProperty("java.class.path"),
      KillableCommit.getClass.getName.stripSuffix("$"),
      kind,
      path.toString
    )
    val pb = new ProcessBuilder(cmd.asJava)
    pb.redirectOutput(ProcessBuilder.Redirect.DISCARD)
    val p = pb.start()
    try {
      val err = new BufferedReader(new InputStreamReader(p.getErrorStream, "UTF-8"))
      val seen = new StringBuilder
      var line = err.readLine()
      while (line != null && !line.contains(s"commit paused at $point")) {
        seen.append(line).append('\n')
        line = err.readLine()
      }
      assert(line != null, s"the writer ended without pausing at $point:\n$seen")
    } finally {
      p.destroyForcibly()
      p.waitFor(60, TimeUnit.SECONDS)
    }
  }

  /**
   * A ReserveFragments-only version after `before`: pylance reads the same table one version
   * on (pylance's Python names that operation only "BaseOperation": the log says which).
   */
  private def assertReserved(path: Path, after: JsonNode, before: JsonNode): Unit = {
    val version = before.get("version").asLong + 1
    assert(after.get("version").asLong == version)
    val log = new TransactionLog(io.sparklance.storage.HadoopFileIO.local(), path.toString)
    assert(log.between(version - 1, version).map(_.operationName) == Seq("ReserveFragments"))
    Seq("schema", "rows", "fragments", "config", "indices").foreach { k =>
      assert(after.get(k) == before.get(k), s"$k differs")
    }
  }

  for (
    kind <- KillAtCommitSuite.operations.keys.toSeq.sorted;
    point <- CommitPauses.Points.toSeq
      .sorted
  ) {
    test(s"our $kind killed at $point leaves the old or the new version") {
      Pylance.require()
      val killed = KillAtCommitSuite.operations(kind)
      val dir = TempDirs.create("lance-kill-")
      val path = dir.resolve("ours")
      Pylance.call("txn_matrix", "make", path.toString, "2.2", true)
      val twin = TempDirs.copyTree(path, dir.resolve("theirs"))
      val before = describe(path)
      killAt(kind, path, point, killed.commit)
      val after = describe(path)
      (point, killed.twin) match {
        case ("after-manifest", Some(op)) =>
          // The new version is committed: it reads as pylance's own operation.
          Pylance.call("txn_matrix", "run", twin.toString, op, "second")
          val theirs = describe(twin)
          assert(theirs.get("valid").asBoolean())
          Seq(
            "version",
            "schema",
            "rows",
            "fragments",
            "config",
            "indices",
            "operation",
            "valid"
          ).foreach(k => assert(after.get(k) == theirs.get(k), s"$k differs"))
        case ("after-manifest", None) => assertReserved(path, after, before)
        case _ if killed.commit > 1 => assertReserved(path, after, before)
        case _ => assert(after == before)
      }
      assert(after.get("valid").asBoolean(), after.get("valid"))
      Pylance.call("txn_matrix", "keep_going", path.toString)
      val fileIO = io.sparklance.storage.HadoopFileIO.local()
      val read = io.sparklance.table.LanceDataset.open(fileIO, path.toString)
        .open(io.sparklance.table.VersionSpec.Latest)
      new Committer(fileIO, path.toString).commit(Some(read), OurOps.append(read, 900, 2, 0))
      assert(describe(path).get("valid").asBoolean())
    }
  }
}

object KillAtCommitSuite {

  /**
   * One of our operations as the child commits it; which of its commits (1-based) the kill
   * hits; and pylance's own operation (the "second" role of txn_matrix.py) its new version
   * must read as — None for a compaction's ReserveFragments, which pylance never commits
   * alone.
   */
  final case class Killed(run: (FileIO, Snapshot) => Unit, commit: Int = 1, twin: Option[String])

  private def op(twin: String)(build: Snapshot => Operation): Killed =
    Killed(
      (fileIO, s) => new Committer(fileIO, s.root).commit(Some(s), build(s)),
      twin = Some(twin)
    )

  val operations: Map[String, Killed] = Map(
    "delete" -> op("delete")(s => OurOps.delete(s, "id = 2")),
    "update" -> op("update")(s => OurOps.update(s, "id = 4", 1)),
    "update_columns" -> op("update_columns")(s => OurOps.updateColumns(s, "id = 4", 1)),
    "append" -> op("append")(s => OurOps.append(s, 200, 5, 1)),
    "overwrite" -> op("overwrite")(s => OurOps.overwrite(s, 400, 3)),
    "restore" -> op("restore")(_ => Restore(1)),
    "update_config" -> op("update_config")(_ =>
      UpdateConfig(config = Some(UpdateMap.set(Map("k" -> "second"))))
    ),
    "drop_columns" -> op("drop_columns")(s =>
      Project(io.sparklance.table.SchemaEdits(s).drop(Seq(Seq("v"))))
    ),
    "add_null_column" -> op("add_null_column")(s => OurOps.addNullColumn(s, "z")),
    "add_columns" -> op("add_columns")(OurOps.addColumnW),
    "data_replacement" -> op("data_replacement")(s => OurOps.replaceFragment0(s, 200)),
    "create_index" -> Killed(OurOps.createIdIndex, twin = Some("create_index")),
    "reserve_fragments" -> Killed(OurOps.compact, twin = None),
    "compact" -> Killed(OurOps.compact, commit = 2, twin = Some("compact"))
  )
}
