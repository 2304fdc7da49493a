package io.sparklance.format.v20

import java.io.File

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.table.{FragmentRef, LanceDataset, VersionSpec}
import io.sparklance.testutil.{DefaultLineOnly, Fixtures, RecordingFileIO}

/**
 * 2.0 batches of fixed-width values read on their own (a window of the page per batch) instead
 * of sliced from a decoded page. By default only wide values (vectors) in large batches go this
 * way; here the threshold is 1 byte, so every fixed-width column of the fixtures does: plain and
 * nullable values, vectors with null rows and null items, validity bitmaps starting mid-byte.
 */
@DefaultLineOnly
class V20BatchWindowSuite extends AnyFunSuite {
  import FixtureSupport._

  private def fixture(name: String): (String, IndexedSeq[JsonNode]) = name match {
    case "multipage_2.0" =>
      val dir =
        new File(getClass.getResource("/format-v20/multipage_2.0.jsonl.gz").toURI).getParentFile
      (
        new File(dir, "multipage_2.0.lance").getAbsolutePath,
        readRows(new File(dir, "multipage_2.0.jsonl.gz"))
      )
    case "paged_2.0" =>
      val dir = Fixtures.testData.resolve("pages")
      (dir.resolve("paged_2.0.lance").toString, readRows(dir.resolve("paged_2.0.jsonl.gz").toFile))
    case other =>
      val fx = Fixtures(other)
      (
        fx.path.toString,
        readRows(Fixtures.testData.resolve(
          fx.version(fx.latestVersion).json.get("rows_file").asText()
        ).toFile)
      )
  }

  /** The first fragment's data file, opened with the given batch-window threshold. */
  private def open(
      root: String,
      minBytes: Long,
      fio: _root_.io.sparklance.storage.FileIO = io
  ): (V20FileReader, Seq[LanceField], Long) = {
    val snap = LanceDataset.open(fio, root).open(VersionSpec.Latest)
    val frag = FragmentRef(snap.root, snap, snap.fragments.head)
    assert(frag.deletionPath.isEmpty && frag.files.size == 1)
    val df = frag.files.head
    (
      new V20FileReader(FileContainer.open(fio.open(df.path)), df.fileFields, minBytes),
      snap.schema.fields,
      frag.physicalRows
    )
  }

  for (name <- Seq("multipage_2.0", "paged_2.0", "types_2.0")) {
    test(s"$name: every fixed-width column read batch by batch equals pylance's rows") {
      val (root, expected) = fixture(name)
      val (r0, fields, rows) = open(root, 1)
      r0.close()
      for (
        (start, end, batch) <-
          Seq((0L, rows, 1), (0L, rows, 37), (rows / 3, rows, 250), (7L, rows - 5, 1000))
      ) {
        val (r, _, _) = open(root, 1)
        try {
          val scan = r.scan(fields, start, end)
          var pos = start
          while (pos < end) {
            val k = math.min(batch.toLong, end - pos).toInt
            val errs = compare(fields, scan.next(k).toSeq, expected.slice(pos.toInt, pos.toInt + k))
            assert(
              errs.isEmpty,
              s"rows [$start, $end) in batches of $batch, at $pos:" + errs.mkString("\n", "\n", "")
            )
            pos += k
          }
        } finally r.close()
      }
    }
  }

  test("a batch window reads the batch's bytes alone; below the threshold the page is read once") {
    val (root, _) = fixture("types_2.0")
    def readsFor(minBytes: Long): Seq[(String, Long, Int)] = {
      val rec = new RecordingFileIO()
      val (r, fields, rows) = open(root, minBytes, rec)
      try {
        val vec = fields.filter(_.name == "fsl_f32_128_none")
        assert(vec.size == 1, fields.map(_.name))
        val scan = r.scan(vec, 0, rows)
        rec.clear()
        (0L until rows by 100).foreach(s => scan.next(math.min(100L, rows - s).toInt))
        rec.rangedReads
      } finally r.close()
    }
    val windows = readsFor(1)
    val whole = readsFor(Long.MaxValue)
    // 500 rows of 128 float32 in one page: five reads of 100 rows (51200 bytes) against one of the page.
    assert(windows.map(_._3) == Seq.fill(5)(51200), windows)
    assert(whole.size == 1 && whole.head._3 == 500 * 512, whole)
  }
}
