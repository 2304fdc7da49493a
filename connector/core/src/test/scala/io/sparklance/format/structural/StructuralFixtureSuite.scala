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
      val d = StructuralTestSupport.diff(
        v.rows,
        StructuralTestSupport.readRows(fx.path.toString, v.version, batch = 37)
      )
      assert(d.isEmpty, d.mkString("\n", "\n", ""))
    }
    test(s"${fx.name} latest in batches of 37 over the scan's own buffers") {
      val v = fx.version(fx.latestVersion)
      val got = StructuralTestSupport.readRows(fx.path.toString, v.version, 37, None, shared = true)
      val d = StructuralTestSupport.diff(v.rows, got)
      assert(d.isEmpty, d.mkString("\n", "\n", ""))
    }
  }
}

/** Partition-style row ranges of the pylance fixtures (repetition-index seeks, page skips). */
class StructuralRangeSuite extends AnyFunSuite {
  import StructuralTestSupport._
  for (name <- Seq("types_2.1", "types_2.2", "multifrag_2.2", "deletions_bitmap_2.2")) {
    test(s"$name row ranges") {
      val fx = Fixtures(name)
      val v = fx.version(fx.latestVersion)
      val full = readRows(fx.path.toString, v.version, 1 << 20)
      val rnd = new scala.util.Random(7)
      val ranges = Seq((0L, 1L), (0L, 3L), (499L, 500L), (100L, 400L)) ++
        Seq.fill(6) { val a = rnd.nextInt(500).toLong; (a, a + 1 + rnd.nextInt(300)) }
      ranges.foreach { case (a, b) =>
        // Expected: the whole read restricted to the same physical rows of every fragment, checked
        // against pylance by the whole-file tests.
        val got = readRows(fx.path.toString, v.version, 1 + rnd.nextInt(100), Some((a, b)))
        val snap = _root_.io.sparklance.table.LanceDataset.open(io, fx.path.toString)
          .open(_root_.io.sparklance.table.VersionSpec.Number(v.version))
        val frags = snap.fragments
        val expected = {
          val out = IndexedSeq.newBuilder[_root_.com.fasterxml.jackson.databind.JsonNode]
          var pos = 0
          frags.foreach { f =>
            val dv = _root_.io.sparklance.table.DeletionVector.read(
              io,
              _root_.io.sparklance.table.FragmentRef(fx.path.toString, snap, f)
            )
            var r = 0L
            while (r < f.getPhysicalRows) {
              if (!dv.contains(r.toInt)) { if (r >= a && r < b) out += full(pos); pos += 1 }
              r += 1
            }
          }
          out.result()
        }
        val d = diff(expected, got)
        assert(d.isEmpty, s"range [$a, $b): " + d.mkString("\n", "\n", ""))
      }
    }
  }
}
