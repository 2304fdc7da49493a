package io.sparklance.table.txn

import java.io.{BufferedReader, InputStreamReader}
import java.nio.file.Path
import java.util.concurrent.TimeUnit

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.table.Snapshot
import io.sparklance.table.commit.CommitPauses
import io.sparklance.testutil.{Pylance, TempDirs}

/**
 * A writer killed at any point of a commit leaves the old version or the new one, nothing in
 * between: for each of our operations and each pause point, a child JVM commits the
 * operation and is killed while it waits there; pylance must then read exactly the table as
 * it was before (or, killed after the manifest, as pylance's own operation makes it),
 * validate it, and keep appending, deleting and updating; our next commit must succeed.
 */
class KillAtCommitSuite extends AnyFunSuite {
  private def describe(p: Path): JsonNode = Pylance.call("txn_matrix", "describe", p.toString)

  /** Runs KillableCommit, waits until it pauses at `point`, and kills it. */
  private def killAt(kind: String, path: Path, point: String): Unit = {
    val javaBin = java.nio.file.Paths.get(System.getProperty("java.home"), "bin", "java").toString
    // Arrow (deletion files) needs the module openings this test JVM was started with.
    val opens = java.lang.management.ManagementFactory.getRuntimeMXBean.getInputArguments
      .asScala.filter(a => a.startsWith("--add-opens") || a.startsWith("--add-exports"))
    val cmd = Seq(javaBin, s"-D${CommitPauses.Property}=$point:600000",
      "-Dsparklance.python=" + Pylance.python) ++ opens ++ Seq("-cp",
      System.getProperty("java.class.path"), KillableCommit.getClass.getName.stripSuffix("$"),
      kind, path.toString)
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

  for (kind <- KillAtCommitSuite.operations.keys.toSeq.sorted; point <- CommitPauses.Points.toSeq
      .sorted) {
    test(s"our $kind killed at $point leaves the old or the new version") {
      Pylance.require()
      val dir = TempDirs.create("lance-kill-")
      val path = dir.resolve("ours")
      Pylance.call("txn_matrix", "make", path.toString, "2.2", true)
      val twin = TempDirs.copyTree(path, dir.resolve("theirs"))
      val before = describe(path)
      killAt(kind, path, point)
      val after = describe(path)
      if (point == "after-manifest") {
        // The new version is committed: it reads as pylance's own operation.
        Pylance.call("txn_matrix", "run", twin.toString, kind, "second")
        val theirs = describe(twin)
        assert(theirs.get("valid").asBoolean())
        Seq("version", "schema", "rows", "fragments", "config", "operation", "valid").foreach { k =>
          assert(after.get(k) == theirs.get(k), s"$k differs")
        }
      } else assert(after == before)
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
  /** Our operations as the "second" role of txn_matrix.py does them. */
  val operations: Map[String, Snapshot => Operation] = Map(
    "delete" -> (s => OurOps.delete(s, "id = 2")),
    "update" -> (s => OurOps.update(s, "id = 4", 1)),
    "append" -> (s => OurOps.append(s, 200, 5, 1)),
    "restore" -> (_ => Restore(1)),
    "update_config" -> (_ => UpdateConfig(config = Some(UpdateMap.set(Map("k" -> "second"))))),
    "drop_columns" -> (s => Project(io.sparklance.table.SchemaEdits(s).drop(Seq(Seq("v"))))),
    "add_null_column" -> (s => OurOps.addNullColumn(s, "z")))
}
