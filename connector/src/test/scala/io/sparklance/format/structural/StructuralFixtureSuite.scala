package io.sparklance.format.structural

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.Fixtures

/**
 * Every 2.1 and 2.2 fixture dataset, every version: what the structural reader decodes must
 * equal what pylance 14.0.2 read, value by value (deletions applied, fragments in manifest order).
 */
class StructuralFixtureSuite extends AnyFunSuite {
  private val fixtures = Fixtures.byFormat("2.1", "2.2")

  test("fixtures exist") { assert(fixtures.nonEmpty) }

  for (fx <- fixtures; v <- fx.versions if v.error.isEmpty) {
    test(s"${fx.name} v${v.version}") {
      val expected = v.rows
      val actual = StructuralTestSupport.readRows(fx.path.toString, v.version, batch = 1 << 20)
      val d = StructuralTestSupport.diff(expected, actual)
      assert(d.isEmpty, d.mkString("\n", "\n", ""))
    }
  }

  // Small batches cross chunk and page boundaries inside one scan.
  for (fx <- fixtures if fx.name.startsWith("types_") || fx.name.startsWith("multifrag_")) {
    test(s"${fx.name} latest in batches of 37") {
      val v = fx.version(fx.latestVersion)
      val d = StructuralTestSupport.diff(v.rows, StructuralTestSupport.readRows(fx.path.toString, v.version, batch = 37))
      assert(d.isEmpty, d.mkString("\n", "\n", ""))
    }
  }
}
