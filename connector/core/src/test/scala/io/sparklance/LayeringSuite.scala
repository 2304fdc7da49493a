package io.sparklance

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import _root_.io.sparklance.testutil.Fixtures

/**
 * The layers depend downward only: format knows nothing of tables or Spark, table nothing
 * of Spark. Checked on the sources, so a stray import fails the build's tests.
 */
class LayeringSuite extends AnyFunSuite {
  private val src = Fixtures.repoRoot.resolve("connector/core/src/main/scala/io/sparklance")

  private def sources(pkg: String): Seq[Path] =
    Files.walk(src.resolve(pkg)).iterator().asScala.filter(_.toString.endsWith(".scala")).toSeq

  private def offending(pkg: String, banned: Seq[String]): Seq[String] =
    sources(pkg).flatMap { p =>
      Files.readAllLines(p).asScala.zipWithIndex.collect {
        case (line, i) if line.trim.startsWith("import") && banned.exists(line.contains) =>
          s"$p:${i + 1}: $line"
      }
    }

  test("format imports neither the table layer nor Spark") {
    assert(sources("format").nonEmpty)
    assert(offending(
      "format",
      Seq("org.apache.spark", "io.sparklance.table", "io.sparklance.spark")
    ).isEmpty)
  }

  test("table does not import Spark") {
    assert(sources("table").nonEmpty)
    assert(offending("table", Seq("org.apache.spark", "io.sparklance.spark")).isEmpty)
  }
}
