package io.sparklance.testutil

import java.nio.file.{Files, Path, Paths}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.Assertions

/**
 * pylance 14 as a co-process: the reference the table-transaction suites compare against.
 * The interpreter is `-Dsparklance.python` or `$SPARKLANCE_PYTHON`, else the repository's
 * `.venv/bin/python`; suites cancel when it is absent, except in CI (`CI=true`), where a
 * missing reference is a broken environment and fails them.
 */
object Pylance extends Assertions {
  lazy val python: Path = Option(System.getProperty("sparklance.python"))
    .orElse(Option(System.getenv("SPARKLANCE_PYTHON")))
    .map(Paths.get(_))
    .getOrElse(Fixtures.repoRoot.resolve(".venv/bin/python"))

  def available: Boolean = Files.isExecutable(python)

  /** Cancels the calling test when there is no pylance to compare with (fails it in CI). */
  def require(): Unit = {
    val why = s"pylance interpreter $python not found (set -Dsparklance.python)"
    if (sys.env.get("CI").exists(_.equalsIgnoreCase("true"))) assert(available, why)
    else assume(available, why)
  }

  private type Server = (Process, java.io.BufferedWriter, java.io.BufferedReader)
  private lazy val resources: Path =
    Fixtures.repoRoot.resolve("connector/core/src/test/resources/pylance")
  private var server: Option[Server] = None

  /**
   * Calls `fn(args...)` of the Python module `module` (a file in test resources' `pylance/`)
   * in one pylance co-process kept for the whole test JVM, and returns its JSON result.
   * Arguments are sent as JSON (strings, numbers, booleans, Seqs and Maps of them).
   */
  def call(module: String, fn: String, args: Any*): JsonNode = synchronized {
    require()
    val (_, in, out) = server.filter(_._1.isAlive).getOrElse(start())
    val req = Fixtures.mapper.createObjectNode()
    req.put("module", module).put("fn", fn)
    req.set[JsonNode]("args", Fixtures.mapper.valueToTree[JsonNode](toJava(args)))
    in.write(Fixtures.mapper.writeValueAsString(req)); in.newLine(); in.flush()
    val line = out.readLine()
    if (line == null) { server = None; fail(s"pylance co-process died during $module.$fn") }
    val reply = Fixtures.mapper.readTree(line)
    if (reply.has("error"))
      fail(s"pylance $module.$fn(${args.mkString(", ")}) failed:\n" + reply.get("error").asText())
    reply.get("value")
  }

  private def start(): Server = {
    val pb = new ProcessBuilder(python.toString, resources.resolve("server.py").toString)
    pb.redirectError(ProcessBuilder.Redirect.INHERIT)
    val p = pb.start()
    val s = (
      p,
      new java.io.BufferedWriter(new java.io.OutputStreamWriter(p.getOutputStream, "UTF-8")),
      new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream, "UTF-8"))
    )
    server = Some(s)
    s
  }

  private def toJava(v: Any): Any = v match {
    case m: Map[_, _] => m.map { case (k, x) => k.toString -> toJava(x) }.asJava
    case s: Iterable[_] => s.map(toJava).toSeq.asJava
    case a: Array[_] => a.toSeq.map(toJava).asJava
    case other => other
  }
}
