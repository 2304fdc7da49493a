package io.sparklance

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import _root_.io.sparklance.testutil.Fixtures

/**
 * Every main Scala source of both modules holds one public top-level type, named for the file,
 * with its companion; a file with a sealed type may hold the family that extends it. Private
 * top-level helpers may stay beside the type they serve. Checked on the sources' column-0
 * definitions.
 */
class OneTypePerFileSuite extends AnyFunSuite {
  private val Definition =
    """(?m)^((?:(?:final|sealed|abstract|case|implicit|private(?:\[\w+\])?|protected(?:\[\w+\])?)\s+)*)(?:class|object|trait)\s+(\w+)""".r

  private val sources: Seq[Path] = Seq("connector/core/src/main", "connector/spark/src/main")
    .map(Fixtures.repoRoot.resolve)
    .flatMap(r => Files.walk(r).iterator().asScala.filter(_.toString.endsWith(".scala")).toSeq)

  test("one public top-level type per file, named for it (companions and sealed families aside)") {
    assert(sources.nonEmpty)
    val bad = sources.flatMap { p =>
      val defs = Definition.findAllMatchIn(new String(Files.readAllBytes(p), "UTF-8")).map(m =>
        (m.group(1), m.group(2))
      ).toSeq
      val public = defs.filterNot(_._1.contains("private")).map(_._2).distinct
      val file = p.getFileName.toString.stripSuffix(".scala")
      val family = defs.exists(_._1.contains("sealed"))
      if (family || public.isEmpty || public == Seq(file)) None
      else Some(s"$p: ${public.mkString(", ")}")
    }
    assert(
      bad.isEmpty,
      bad.mkString("files holding other public types than their own:\n", "\n", "")
    )
  }
}
