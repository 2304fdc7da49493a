package io.sparklance.spark

import java.io.File

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceCorruptFileException
import io.sparklance.format._
import io.sparklance.format.v20.FixtureSupport
import io.sparklance.storage.{FileEntry, FileIO, HadoopFileIO, RandomAccessInput}
import io.sparklance.table._
import io.sparklance.testutil.{Fixtures, RecordingFileIO, TempDirs}

/**
 * Page-aligned split planning on the multi-page fixtures of src-test-data/pages/ (written by
 * generate_pages.py with a tiny page cache, so each column is cut at its own rows). The page
 * row counts and bytes the tests expect come from the files' own metadata as the generator
 * read it, the values from pylance's `to_table()`.
 */
class SplitPlannerSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()
  private val dir = Fixtures.testData.resolve("pages")
  private val formats = Seq("legacy", "2.0", "2.1", "2.2")

  private def root(fmt: String) = dir.resolve(s"paged_$fmt.lance").toString
  private def snapshot(fmt: String, fio: FileIO = io) =
    LanceDataset.open(fio, root(fmt)).open(VersionSpec.Latest)
  private def fragments(fmt: String, fio: FileIO = io): Seq[FragmentRef] = {
    val s = snapshot(fmt, fio)
    s.fragments.map(FragmentRef(s.root, s, _))
  }
  private def pagesJson(fmt: String): JsonNode =
    Fixtures.mapper.readTree(dir.resolve(s"paged_$fmt.pages.json").toFile)
  private def expectedRows(fmt: String): IndexedSeq[JsonNode] =
    FixtureSupport.readRows(new File(dir.toFile, s"paged_$fmt.jsonl.gz"))

  /** The generator's record of the first fragment's data file: (field ids, column indices, per column (rows, bytes) of each page). */
  private case class FileRecord(
      fields: Seq[Int],
      columns: Seq[Int],
      pages: Seq[(Array[Long], Array[Long])],
      batchOffsets: Seq[Long]
  )
  private def fileRecord(fmt: String, fragment: Int): FileRecord = {
    val files = pagesJson(fmt).get("files")
    val f = files.fields().asScala.map(_.getValue).find(_.get("fragment").asInt() == fragment).get
    def longs(n: JsonNode) = n.elements().asScala.map(_.asLong()).toArray
    FileRecord(
      f.get("fields").elements().asScala.map(_.asInt()).toSeq,
      f.get("column_indices").elements().asScala.map(_.asInt()).toSeq,
      Option(f.get("columns")).map(_.elements().asScala.map(c =>
        (longs(c.get("page_rows")), longs(c.get("page_bytes")))
      ).toSeq).getOrElse(Nil),
      Option(f.get("batch_offsets")).map(n => longs(n).toSeq).getOrElse(Nil)
    )
  }

  /** Page starts (0, ..., rows) of column `c` as the generator recorded them. */
  private def starts(rec: FileRecord, c: Int): Seq[Long] =
    rec.pages(c)._1.scanLeft(0L)(_ + _).toSeq.distinct

  private def field(fmt: String, name: String): LanceField =
    snapshot(fmt).schema.fields.find(_.name == name).get

  private def openFirstFile(fmt: String): LanceFileReader = {
    val df = fragments(fmt).head.files.head
    LanceFileReader.open(io, df.path, df.major, df.minor, df.fileFields)
  }

  for (fmt <- formats) {
    test(s"$fmt: the fixture really has many pages, at different rows per column") {
      val rec = fileRecord(fmt, 0)
      if (fmt == "legacy") assert(rec.batchOffsets.size >= 5)
      else {
        assert(rec.pages.count(_._1.length >= 10) >= 5)
        assert(rec.pages.map(_._1.toSeq).distinct.size >= 2, "every column is cut at the same rows")
      }
    }

    test(s"$fmt: pageSpans reports every row-aligned column as the file's metadata records it") {
      val rec = fileRecord(fmt, 0)
      val r = openFirstFile(fmt)
      try {
        val spans = r.pageSpans(snapshot(fmt).schema.fields)
        if (fmt == "legacy") {
          assert(spans.size == 1 && spans.head.column == -1)
          assert(spans.head.rowStarts.toSeq == rec.batchOffsets)
        } else {
          val colOf =
            rec.fields.zip(if (rec.columns.isEmpty) rec.fields.indices else rec.columns).toMap
          // 2.0 has a column for every field, but list items count items, not rows; 2.1/2.2
          // have leaf columns only, and a list's leaf pages count rows.
          val liItem = field(fmt, "li").children.head.id
          val expectedCols =
            if (fmt == "2.0") colOf.filter(_._1 != liItem).values.toSet else colOf.values.toSet
          assert(spans.map(_.column).toSet == expectedCols)
          spans.foreach { s =>
            val (rows, bytes) = rec.pages(s.column)
            assert(s.rowStarts.toSeq == rows.scanLeft(0L)(_ + _).toSeq, s"column ${s.column} rows")
            assert(s.bytes.toSeq == bytes.toSeq, s"column ${s.column} bytes")
          }
        }
      } finally r.close()
    }

    // With a tiny target every slice is one page of the chosen column.
    for (
      proj <- Seq(
        Seq("id"),
        Seq("x"),
        Seq("vec"),
        Seq("id", "x"),
        Seq("s", "vec"),
        Seq("id", "x", "s", "li", "st", "vec")
      )
    ) {
      test(
        s"$fmt: split_size=1 over ${proj.mkString(",")} cuts at every page start of the projected column with the largest pages"
      ) {
        val fields = proj.map(field(fmt, _))
        val parts = SplitPlanner.plan(io, fragments(fmt), 1, 0, fields)
        val slices = parts.flatMap(_.slices.toSeq)
        assert(parts.forall(_.slices.length == 1))
        val first = slices.filter(_.fragment.id == 0)
        val rec = fileRecord(fmt, 0)
        val expected: Seq[Long] =
          if (fmt == "legacy") rec.batchOffsets
          else {
            val colOf =
              rec.fields.zip(if (rec.columns.isEmpty) rec.fields.indices else rec.columns).toMap
            def cols(f: LanceField): Seq[Int] = (colOf.get(f.id).toSeq ++ (f.logicalType match {
              case LogicalType.Struct => f.children.flatMap(cols)
              case LogicalType.List if fmt != "2.0" => f.children.flatMap(cols)
              case _ => Nil
            })).filter(c => rec.pages(c)._1.nonEmpty)
            val candidates = fields.flatMap(cols).distinct
            val mean = candidates.map { c =>
              val (_, b) = rec.pages(c); c -> b.sum.toDouble / b.length
            }
            val best = mean.maxBy(m => (m._2, -m._1))._1
            starts(rec, best)
          }
        assert(first.map(_.start) == expected.dropRight(1), "slice starts")
        assert(first.map(_.end) == expected.drop(1), "slice ends")
        // Slices cover every fragment exactly.
        fragments(fmt).foreach { f =>
          val mine = slices.filter(_.fragment.id == f.id)
          assert(mine.head.start == 0 && mine.last.end == f.physicalRows)
          mine.zip(mine.tail).foreach { case (a, b) => assert(a.end == b.start) }
        }
      }
    }

    test(
      s"$fmt: every partition of a tiny split_size read through FragmentReader equals pylance's rows"
    ) {
      val s = snapshot(fmt)
      val fields = s.schema.fields
      val expected = expectedRows(fmt)
      def starts(p: Seq[LanceInputPartition]) =
        p.flatMap(_.slices.toSeq).map(s => (s.fragment.id, s.start))
      val onPages = SplitPlanner.plan(io, fragments(fmt), 3000, 0, fields)
      // Slices of any size may cut mid-page: the readers start and stop inside pages.
      val midPage = SplitPlanner.plan(io, fragments(fmt), 3000, 0, fields, midPageMinRows = 1)
      assert(starts(onPages) != starts(midPage))
      for (parts <- Seq(onPages, midPage)) {
        assert(parts.size > 5)
        val cols = parts.flatMap(_.slices.toSeq).map { sl =>
          val r = new FragmentReader(
            io,
            sl.fragment,
            fields,
            DeletionVector.read(io, sl.fragment),
            sl.start,
            sl.end
          )
          try {
            val batches = Iterator.continually(r.remaining).takeWhile(_ > 0)
              .map(rem => r.next(math.min(97L, rem).toInt)._1).toSeq
            fields.indices.map(i => ColumnArrays.concat(batches.map(_(i))))
          } finally r.close()
        }
        val merged = fields.indices.map(i => ColumnArrays.concat(cols.map(_(i))))
        val errs = FixtureSupport.compare(fields, merged, expected.map(FixtureSupport.normalize))
        assert(errs.isEmpty, errs.mkString("\n", "\n", ""))
      }
    }
  }

  test("a small fragment is one slice, planned without reading any data file") {
    val rec = new RecordingFileIO()
    val frags = fragments("2.1", rec)
    rec.clear()
    val parts = SplitPlanner.plan(rec, frags, 128L << 20, 4L << 20, Seq(field("2.1", "vec")))
    assert(parts.flatMap(_.slices.toSeq).map(s => (s.start, s.end)) == frags.map(f =>
      (0L, f.physicalRows)
    ))
    assert(rec.openedPaths.isEmpty && rec.rangedReads.isEmpty)
  }

  test("a large fragment's first slice fills the partition being packed") {
    // The small fragment first, then the large one, on a target of half their bytes: two
    // tasks of about half (not the small fragment alone, then the large one in two).
    val frags = fragments("2.2").reverse
    val bytes = frags.map(SplitPlanner.estimatedBytes)
    val target = bytes.sum / 2
    val fields = Seq(field("2.2", "vec"), field("2.2", "s"))
    val parts = SplitPlanner.plan(io, frags, target, 0, fields)
    def shown(p: LanceInputPartition) = p.slices.map(s => (s.fragment.id, s.start, s.end)).toSeq
    assert(parts.size == 2, parts.map(shown))
    assert(parts.head.slices.map(_.fragment.id).toSeq == Seq(frags.head.id, frags.last.id))
    def partBytes(p: LanceInputPartition): Long = p.slices.map { sl =>
      (sl.end - sl.start) * (SplitPlanner.estimatedBytes(sl.fragment) / sl.fragment.physicalRows)
    }.sum
    parts.foreach(p => assert(math.abs(partBytes(p) - target) < target / 4, shown(p)))
    // The cut is one of the large fragment's page starts, and the slices cover it exactly.
    val large = parts.flatMap(_.slices.toSeq).filter(_.fragment.id == frags.last.id)
    assert(large.map(s => (s.start, s.end)) ==
      Seq((0L, large.head.end), (large.head.end, frags.last.physicalRows)))
    val rec = fileRecord("2.2", frags.last.id.toInt)
    assert(rec.pages.indices.exists(c => starts(rec, c).contains(large.head.end)))
  }

  test("one tail read per split fragment, none for the small one") {
    val rec = new RecordingFileIO()
    val frags = fragments("2.2", rec)
    rec.clear()
    SplitPlanner.plan(rec, frags, 20000, 0, Seq(field("2.2", "vec"), field("2.2", "s")))
    assert(rec.openedPaths == Seq(frags.head.files.head.path))
    assert(
      rec.rangedReads.size <= 2,
      rec.rangedReads.toString
    ) // the 64 KiB tail (the whole small file)
  }

  test(
    "without a projected column, or when the data file cannot be read, ranges are multiples of 1024 rows"
  ) {
    val frags = fragments("2.0")
    def starts(parts: Seq[LanceInputPartition]) =
      parts.flatMap(_.slices.toSeq).filter(_.fragment.id == 0).map(_.start)
    assert(starts(SplitPlanner.plan(io, frags, 1, 0, Nil)) == Seq(0L, 1024L, 2048L, 3072L))
    val denied = new DenyDataFiles(io)
    assert(starts(SplitPlanner.plan(denied, frags, 1, 0, Seq(field("2.0", "vec")))) == Seq(
      0L,
      1024L,
      2048L,
      3072L
    ))
  }

  test("slices holding none of a fragment's index candidates are not planned") {
    val frags = fragments("2.0")
    val f0 = frags.filter(_.id == 0).map(_.copy(rowCandidates =
      Some(org.roaringbitmap.RoaringBitmap.bitmapOf(1500, 3100))
    ))
    val slices = SplitPlanner.plan(io, f0, 1, 0, Nil).flatMap(_.slices.toSeq)
    assert(slices.map(_.start) == Seq(1024L, 3072L))
    val all = SplitPlanner.plan(io, f0.map(_.copy(rowCandidates = None)), 1, 0, Nil)
    assert(all.flatMap(_.slices.toSeq).map(_.start) == Seq(0L, 1024L, 2048L, 3072L))
  }

  test("a corrupt data file fails planning with a corrupt-file error naming it") {
    val copy = TempDirs.copyTree(
      new File(root("2.1")).toPath,
      TempDirs.create("paged-").resolve("paged_2.1.lance")
    )
    val s = LanceDataset.open(io, copy.toString).open(VersionSpec.Latest)
    val frags = s.fragments.map(FragmentRef(s.root, s, _))
    val victim = new File(frags.head.files.head.path.stripPrefix("file:"))
    val bytes = java.nio.file.Files.readAllBytes(victim.toPath)
    // Garbage column metadata and footer offsets; the version and magic stay, so the file is opened as 2.1.
    java.util.Arrays.fill(bytes, bytes.length - 200, bytes.length - 8, 0x7f.toByte)
    java.nio.file.Files.write(victim.toPath, bytes)
    val e =
      intercept[LanceCorruptFileException](SplitPlanner.plan(io, frags, 1, 0, s.schema.fields))
    assert(e.getMessage.contains(victim.getName))
  }

  test("defaultTarget: one split a slot for data under slots x maxPartitionBytes, odd or even") {
    val mb = 1L << 20
    for (total <- Seq(80 * mb, 80 * mb + 1, 80 * mb - 1, 9 * mb + 7)) {
      val t = SplitPlanner.defaultTarget(total, 128 * mb, 2, 4 * mb)
      assert((total + t - 1) / t == 2, s"$total bytes: splits of $t")
    }
    // Over two slots' worth of maxPartitionBytes: a whole number of waves of smaller splits.
    val big = SplitPlanner.defaultTarget(311 * mb, 128 * mb, 2, 4 * mb)
    assert(big == (311 * mb + 3) / 4)
  }

  test("balancedTarget: as many splits as the file rule or more, a whole number of waves") {
    val mb = 1L << 20
    // 311 MB at 128 MB a split is three tasks on two slots; four of 78 MB take two halves.
    assert(SplitPlanner.balancedTarget(311 * mb, 128 * mb, 2, 4 * mb) == (311 * mb + 3) / 4)
    // Already a whole number of waves, or one slot: the file rule's size.
    assert(SplitPlanner.balancedTarget(256 * mb, 128 * mb, 2, 4 * mb) == 128 * mb)
    assert(SplitPlanner.balancedTarget(311 * mb, 128 * mb, 1, 4 * mb) == 128 * mb)
    // Never below the open cost, and nothing to split is no error.
    assert(SplitPlanner.balancedTarget(5 * mb, 4 * mb, 8, 4 * mb) == 4 * mb)
    assert(SplitPlanner.balancedTarget(0L, 4 * mb, 2, 4 * mb) == 4 * mb)
    for (total <- Seq(1L, 7 * mb, 300 * mb, 1000 * mb); slots <- Seq(1, 2, 3, 8)) {
      val rule = math.min(128 * mb, math.max(4 * mb, total / slots))
      val t = SplitPlanner.balancedTarget(total, rule, slots, 4 * mb)
      assert(t <= rule && t >= 4 * mb.min(rule))
    }
  }

  test("perCoreTarget: one split a slot unless a split would decode over maxPartitionBytes") {
    val mb = 1L << 20
    // TPC-H lineitem's 311 MB, three of its sixteen columns read (about a seventh of a row):
    // two splits on two slots, where the file rule gives four.
    assert(SplitPlanner.perCoreTarget(311 * mb, 128 * mb, 2, 4 * mb, 1.0 / 7) == (311 * mb + 1) / 2)
    // Every column read: no split over maxPartitionBytes.
    assert(SplitPlanner.perCoreTarget(311 * mb, 128 * mb, 2, 4 * mb, 1.0) == 128 * mb)
    // A column of a seventh of the row caps splits at seven times maxPartitionBytes.
    val capped = SplitPlanner.perCoreTarget(10000 * mb, 128 * mb, 2, 4 * mb, 1.0 / 7)
    assert(math.abs(capped - 128 * mb * 7) <= 1, capped)
    // Never below the open cost; nothing read or nothing to split is no error.
    assert(SplitPlanner.perCoreTarget(5 * mb, 128 * mb, 8, 4 * mb, 0.5) == 4 * mb)
    assert(SplitPlanner.perCoreTarget(0L, 128 * mb, 2, 4 * mb, 0.0) == 4 * mb)
    for (
      total <- Seq(1L, 7 * mb, 300 * mb, 1000 * mb); slots <- Seq(1, 2, 3, 8);
      share <- Seq(0.01, 0.3, 1.0)
    ) {
      val t = SplitPlanner.perCoreTarget(total, 128 * mb, slots, 4 * mb, share)
      // No more splits than the file rule gives, and no split decoding over the cap.
      assert(t >= SplitPlanner.defaultTarget(total, 128 * mb, slots, 4 * mb))
      assert(t <= math.max(4 * mb, (128 * mb / share).toLong))
    }
  }

  test("cutAtBoundaries: nearest boundary to the target, at least one page a slice") {
    val b = Array(0L, 100L, 150L, 400L, 1000L, 1010L)
    assert(SplitPlanner.cutAtBoundaries(b, 1).toSeq == b.toSeq)
    assert(SplitPlanner.cutAtBoundaries(b, 160).toSeq == Seq(0L, 150L, 400L, 1000L, 1010L))
    assert(SplitPlanner.cutAtBoundaries(b, 10000).toSeq == Seq(0L, 1010L))
    // The first slice's own target, then the usual step from where it ended.
    assert(SplitPlanner.cutAtBoundaries(b, 250, firstRows = 120).toSeq ==
      Seq(0L, 100L, 400L, 1000L, 1010L))
    assert(SplitPlanner.cutAtBoundaries(b, 100, firstRows = 5000).toSeq == Seq(0L, 1010L))
    assert(SplitPlanner.alignedBounds(2500).toSeq == Seq(0L, 1024L, 2048L, 2500L))
  }

  test("cutAtBoundaries: large slices cut mid-page when no boundary is within a 32nd") {
    def cut(b: Seq[Long], step: Long, first: Long = -1) =
      SplitPlanner.cutAtBoundaries(b.toArray, step, first).toSeq
    // One page of 800,000 rows in two halves (rounded to 1024 rows), not one task.
    assert(cut(Seq(0L, 800000L), 400000) == Seq(0L, 400384L, 800000L))
    // Pages of 2^20 rows: 749,568 + 750,432 (the rest, within a 32nd), not 70% + 30%.
    assert(cut(Seq(0L, 1048576L, 1500000L), 750000) == Seq(0L, 749568L, 1500000L))
    // A boundary within a 32nd of the target is kept, and so is the end.
    assert(cut(Seq(0L, 390000L, 800000L), 400000) == Seq(0L, 390000L, 800000L))
    assert(cut(Seq(0L, 200000L, 430000L, 800000L), 400000) ==
      Seq(0L, 400384L, 800000L))
    // After a mid-page cut the next slice may end on a boundary again.
    assert(cut(Seq(0L, 1000000L, 1200000L, 2000000L), 400000) ==
      Seq(0L, 400384L, 800768L, 1200000L, 1600512L, 2000000L))
    assert(cut(Seq(0L, 1000000L, 1590000L, 2000000L), 400000, first = 795000) ==
      Seq(0L, 794624L, 1195008L, 1590000L, 2000000L))
    // Under MidPageMinRows rows a slice, page boundaries only.
    val small = SplitPlanner.MidPageMinRows - 1
    assert(cut(Seq(0L, 10 * small), small) == Seq(0L, 10 * small))
  }
}

/** A FileIO whose data files (under `data/`) cannot be opened, as with a permission denied. */
private final class DenyDataFiles(inner: FileIO) extends FileIO {
  private def deny(path: String) = path.contains("/data/")
  override def exists(path: String): Boolean = inner.exists(path)
  override def isDirectory(path: String): Boolean = inner.isDirectory(path)
  override def list(dir: String): Seq[FileEntry] = inner.list(dir)
  override def size(path: String): Long = inner.size(path)
  override def readFully(path: String): Array[Byte] = inner.readFully(path)
  override def readRange(path: String, offset: Long, length: Int): Array[Byte] =
    inner.readRange(path, offset, length)
  override def open(path: String): RandomAccessInput =
    if (deny(path)) throw new java.nio.file.AccessDeniedException(path) else inner.open(path)
  override def createIfAbsent(path: String, bytes: Array[Byte]): Boolean =
    inner.createIfAbsent(path, bytes)
  override def write(path: String, bytes: Array[Byte]): Unit = inner.write(path, bytes)
  override def create(path: String): java.io.OutputStream = inner.create(path)
  override def delete(path: String): Boolean = inner.delete(path)
}
