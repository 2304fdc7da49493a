package io.sparklance.format.structural

import org.scalatest.funsuite.AnyFunSuite

/**
 * The forced-encoding fixtures of src-test-data/structural/ (compression zstd/lz4/fsst/none,
 * byte-stream-split, forced full-zip, long values, packed structs, lists spanning chunks and
 * pages, nested fixed-size lists, dictionaries, RLE, packed structs of 2.1 and 2.2, fixed-size
 * lists with all-null items, fixed-size lists of structs): whole scans, small batches, and row
 * ranges as partition splits would open them, all compared with pylance's rows.
 */
class StructuralEncodingsSuite extends AnyFunSuite {
  import StructuralTestSupport._

  private def check(name: String, batch: Int, range: Option[(Long, Long)]): Unit = {
    val all = StructuralFixtures.rows(name)
    val expected = range.fold(all) { case (a, b) => all.slice(a.toInt, b.toInt) }
    val d = diff(expected, readRows(StructuralFixtures.path(name), 1, batch, range))
    assert(d.isEmpty, d.mkString("\n", "\n", ""))
  }

  test("structural fixtures exist") { assert(StructuralFixtures.names.size >= 10) }

  for (name <- StructuralFixtures.names) {
    test(s"$name: whole file") { check(name, 1 << 20, None) }
    test(s"$name: batches of 29") { check(name, 29, None) }
    test(s"$name: row ranges") {
      val n = StructuralFixtures.rows(name).size.toLong
      val rnd = new scala.util.Random(name.hashCode)
      val ranges = Seq((0L, 1L), (n - 1, n), (n / 3, n / 2), (1L, n - 1)) ++
        Seq.fill(6) {
          val a = rnd.nextInt(n.toInt).toLong; (a, math.min(n, a + 1 + rnd.nextInt(700)))
        }
      ranges.foreach { r => withClue(s"range $r: ") { check(name, 1 + rnd.nextInt(300), Some(r)) } }
    }
  }
}
