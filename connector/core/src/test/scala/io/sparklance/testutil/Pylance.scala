package io.sparklance.testutil

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.Assertions

/**
 * pylance 14 as a subprocess: the reference the table-transaction suites compare against.
 * The interpreter is `-Dsparklance.python` or `$SPARKLANCE_PYTHON`, else the repository's
 * `.venv/bin/python`; suites cancel (not fail) when it is absent.
 */
object Pylance extends Assertions {
  lazy val python: Path = Option(System.getProperty("sparklance.python"))
    .orElse(Option(System.getenv("SPARKLANCE_PYTHON")))
    .map(Paths.get(_))
    .getOrElse(Fixtures.repoRoot.resolve(".venv/bin/python"))

  private lazy val script: Path =
    Fixtures.repoRoot.resolve("connector/core/src/test/resources/pylance/txn_ops.py")

  def available: Boolean = Files.isExecutable(python)

  /** Cancels the calling test when there is no pylance to compare with. */
  def require(): Unit =
    assume(available, s"pylance interpreter $python not found (set -Dsparklance.python)")

  /** Runs one command of txn_ops.py and returns its JSON output. */
  def run(args: String*): JsonNode = {
    require()
    val pb = new ProcessBuilder((Seq(python.toString, script.toString) ++ args).asJava)
    val err = Files.createTempFile("pylance-", ".err")
    pb.redirectError(err.toFile)
    val p = pb.start()
    val out = new String(p.getInputStream.readAllBytes(), "UTF-8")
    val rc = p.waitFor()
    if (rc != 0)
      fail(s"pylance ${args.mkString(" ")} failed ($rc): " +
        new String(Files.readAllBytes(err), "UTF-8"))
    Fixtures.mapper.readTree(out)
  }
}
