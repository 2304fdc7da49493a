package io.sparklance.format

import java.io.File

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format.structural.StructuralFixtures
import io.sparklance.format.v20.FixtureSupport
import io.sparklance.table.{FragmentRef, LanceDataset, VersionSpec}
import io.sparklance.testutil.{DefaultLineOnly, Fixtures, RecordingFileIO}

/**
 * `FileScan.skip` in every reader: scans that skip and read in turn (within a page or chunk,
 * to a page's end, across many pages, from a range starting mid-page) return exactly the rows
 * pylance returns at those positions.
 */
@DefaultLineOnly
class FileScanSkipSuite extends AnyFunSuite {
  private val io = FixtureSupport.io
  private val pages = Fixtures.testData.resolve("pages")

  /** (name, dataset root, pylance's rows of the whole dataset). */
  private val datasets: Seq[(String, String, () => IndexedSeq[JsonNode])] =
    Seq("legacy", "2.0", "2.1", "2.2").map { fmt =>
      (
        s"paged_$fmt",
        pages.resolve(s"paged_$fmt.lance").toString,
        () => FixtureSupport.readRows(pages.resolve(s"paged_$fmt.jsonl.gz").toFile)
      )
    } ++ Seq("types_legacy", "types_2.0", "types_2.1", "types_2.2").map { name =>
      val fx = Fixtures(name)
      val v = fx.version(fx.latestVersion)
      (
        name,
        fx.path.toString,
        () =>
          FixtureSupport.readRows(
            Fixtures.testData.resolve(v.json.get("rows_file").asText()).toFile
          )
      )
    } ++ Seq(
      "compression_2.1",
      "compression_2.2",
      "fullzip_forced_2.1",
      "fullzip_forced_2.2",
      "long_lists_2.2"
    ).map { name =>
      (
        name,
        StructuralFixtures.path(name),
        () => {
          val in = new java.util.zip.GZIPInputStream(
            java.nio.file.Files.newInputStream(StructuralFixtures.dir.resolve(s"$name.jsonl.gz"))
          )
          val tmp = File.createTempFile("rows", ".jsonl"); tmp.deleteOnExit()
          try java.nio.file.Files.copy(
              in,
              tmp.toPath,
              java.nio.file.StandardCopyOption.REPLACE_EXISTING
            )
          finally in.close()
          FixtureSupport.readRows(tmp)
        }
      )
    }

  private val nf = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance

  /**
   * pylance renders a map row as `[[key, value], ...]`, FixtureSupport as the entries structs it
   * decodes, `[{"key": .., "value": ..}, ...]`: rewrites the expected top-level maps that way.
   */
  private def mapsAsEntries(fields: Seq[LanceField], row: JsonNode): JsonNode = {
    val maps = fields.filter(_.logicalType == LogicalType.Map)
    if (maps.isEmpty) row
    else {
      val o = row.deepCopy().asInstanceOf[com.fasterxml.jackson.databind.node.ObjectNode]
      maps.foreach { m =>
        val names = m.children.head.children.map(_.name)
        val v = o.get(m.name)
        if (v != null && v.isArray) {
          val arr = nf.arrayNode()
          v.elements().forEachRemaining { pair =>
            val e = nf.objectNode()
            e.set[JsonNode](names(0), pair.get(0)); e.set[JsonNode](names(1), pair.get(1))
            arr.add(e)
          }
          o.set[JsonNode](m.name, arr)
        }
      }
      o
    }
  }

  /** Op lists: positive = next(k), negative = skip(-k), `Int.MinValue` = skip(0). */
  private def patterns(rows: Int, rnd: scala.util.Random): Seq[(Long, Seq[Int])] = {
    val fixed = Seq(
      (0L, Seq(-1, 5, -(rows / 2), 7, -3, 1)),
      (3L, Seq(Int.MinValue, 2, -(rows / 3), 50, -1)),
      (rows / 4L, Seq(-(rows / 4), 33, -(rows / 5), 9))
    )
    val random = Seq.fill(4) {
      val start = rnd.nextInt(rows / 2).toLong
      var left = rows - start
      val ops = Seq.newBuilder[Int]
      while (left > 0) {
        val k = math.min(left, 1 + rnd.nextInt(math.max(1, rows / 6))).toInt
        ops += (if (rnd.nextBoolean()) k else -k)
        left -= k
      }
      (start, ops.result())
    }
    fixed ++ random
  }

  for ((name, root, rowsOf) <- datasets) {
    test(s"$name: skip and next in turn return pylance's rows") {
      val snap = LanceDataset.open(io, root).open(VersionSpec.Latest)
      val frag = FragmentRef(snap.root, snap, snap.fragments.head)
      assert(frag.deletionPath.isEmpty)
      val fields = snap.schema.fields
      val expected = rowsOf()
      val df = frag.files.head
      assert(frag.files.size == 1)
      val rows = frag.physicalRows.toInt
      patterns(rows, new scala.util.Random(name.hashCode)).foreach { case (start, ops) =>
        val r = LanceFileReader.open(io, df.path, df.major, df.minor, df.fileFields)
        try {
          val end = math.min(
            rows.toLong,
            start + ops.map(o => if (o == Int.MinValue) 0 else math.abs(o).toLong).sum
          )
          val scan = r.scan(fields, start, end)
          var pos = start
          ops.foreach { op =>
            val k = if (op == Int.MinValue) 0 else math.min(math.abs(op).toLong, end - pos).toInt
            if (op < 0) scan.skip(k)
            else if (k > 0) {
              val cols = scan.next(k)
              val errs = FixtureSupport.compare(
                fields,
                cols.toSeq,
                expected.slice(pos.toInt, pos.toInt + k).map(mapsAsEntries(fields, _))
              )
              assert(
                errs.isEmpty,
                s"start $start ops $ops at row $pos:" + errs.mkString("\n", "\n", "")
              )
            }
            pos += k
          }
          scan.close()
        } finally r.close()
      }
    }
  }

  test("skipping whole pages reads none of their bytes (2.0, 2.1, 2.2, legacy)") {
    for (fmt <- Seq("legacy", "2.0", "2.1", "2.2")) {
      val rec = new RecordingFileIO()
      val root = pages.resolve(s"paged_$fmt.lance").toString
      val snap = LanceDataset.open(rec, root).open(VersionSpec.Latest)
      val frag = FragmentRef(snap.root, snap, snap.fragments.head)
      val df = frag.files.head
      val vec = snap.schema.fields.filter(_.name == "vec")
      val r = LanceFileReader.open(rec, df.path, df.major, df.minor, df.fileFields)
      try {
        val scan = r.scan(vec, 0, frag.physicalRows)
        rec.clear()
        scan.next(10)
        val firstRead = rec.rangedReads.map(_._3.toLong).sum
        rec.clear()
        scan.skip((frag.physicalRows - 20).toInt)
        scan.next(10)
        val afterSkip = rec.rangedReads.map(_._3.toLong).sum
        // 4000 rows of 8 float32: reading all that was skipped would be ~128 KB.
        assert(
          afterSkip <= math.max(firstRead, 1L) * 4 && afterSkip < 16 * 1024,
          s"$fmt read $afterSkip bytes after the skip"
        )
      } finally r.close()
    }
  }
}
