package io.sparklance.format

import java.nio.file.Path

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format.v20.FixtureSupport
import io.sparklance.storage.FileIO
import io.sparklance.table.{DataFileRef, FragmentRef, LanceDataset, Snapshot, VersionSpec}
import io.sparklance.testutil.{Fixtures, RecordingFileIO, TempDirs}

/**
 * [[FileMetadataCache]]: a data file opened with the size its manifest records is opened once
 * per JVM — later opens read only pages, and return pylance's rows — and the cache keeps
 * what fits, least recently used first out.
 */
class FileMetadataCacheSuite extends AnyFunSuite {
  private val pages = Fixtures.testData.resolve("pages")

  /** A private copy of a paged fixture (paths no other suite opens) and pylance's rows. */
  private def copyOf(fmt: String): (String, IndexedSeq[JsonNode]) =
    (
      copied(s"paged_$fmt.lance"),
      FixtureSupport.readRows(pages.resolve(s"paged_$fmt.jsonl.gz").toFile)
    )

  private def copied(name: String): String =
    TempDirs.copyTree(pages.resolve(name), TempDirs.create("metadata-cache-").resolve(name))
      .toString

  private def snapshot(io: FileIO, root: String): Snapshot =
    LanceDataset.open(io, root).open(VersionSpec.Latest)

  private def files(snap: Snapshot): Seq[(FragmentRef, DataFileRef)] =
    snap.fragments.map(FragmentRef(snap.root, snap, _)).map { f =>
      assert(f.files.size == 1 && f.deletionPath.isEmpty)
      f -> f.files.head
    }

  /** Every row, fragment after fragment, read through `io`, compared with pylance's. */
  private def readAndCompare(io: FileIO, snap: Snapshot, expected: IndexedSeq[JsonNode]): Unit = {
    val fields = snap.schema.fields
    var at = 0
    files(snap).foreach { case (f, df) =>
      val rows = f.physicalRows.toInt
      val r = df.open(io)
      try {
        val scan = r.scan(fields, 0, rows)
        val errs =
          FixtureSupport.compare(fields, scan.next(rows).toSeq, expected.slice(at, at + rows))
        assert(errs.isEmpty, errs.mkString("\n"))
        scan.close()
      } finally r.close()
      at += rows
    }
    assert(at == expected.size)
  }

  /** The metadata region of a file: from its column metadata to its end. */
  private def metadataStart(io: FileIO, path: String): Long = {
    val c = FileContainer.open(io.open(path))
    try math.min(c.footer.columnMetaStart, c.footer.cmoTableStart)
    finally c.input.close()
  }

  for (fmt <- Seq("2.0", "2.1", "2.2")) {
    test(s"$fmt: a data file is opened once; later scans read only pages and give pylance's rows") {
      val (root, expected) = copyOf(fmt)
      val rec = new RecordingFileIO()
      val snap = snapshot(rec, root)
      val dataFiles = files(snap).map(_._2)
      assert(
        dataFiles.exists(_.sizeBytes > FileContainer.TailBytes) &&
          dataFiles.exists(_.sizeBytes <= FileContainer.TailBytes),
        "a large and a small file"
      )
      rec.clear()
      readAndCompare(rec, snap, expected)
      val first = rec.rangedReads
      dataFiles.foreach { df =>
        val tail = df.sizeBytes - math.min(df.sizeBytes, FileContainer.TailBytes)
        assert(
          first.exists(r => r._1 == df.path && r._2 == tail),
          s"the tail of ${df.path} was read"
        )
      }
      rec.clear()
      readAndCompare(rec, snap, expected)
      val again = rec.rangedReads
      dataFiles.foreach { df =>
        val mine = again.filter(_._1 == df.path)
        if (df.sizeBytes <= FileContainer.TailBytes) {
          assert(mine.isEmpty, s"a file of ${df.sizeBytes} bytes is served from memory: $mine")
        } else {
          val meta = metadataStart(rec, df.path)
          assert(
            mine.nonEmpty && mine.forall(r => r._2 + r._3 <= meta),
            s"only pages of ${df.path} are read again (metadata from $meta): $mine"
          )
        }
      }
    }
  }

  test("a file opened with another size, or with none, is read again and not kept") {
    val (root, expected) = copyOf("2.2")
    val rec = new RecordingFileIO()
    val snap = snapshot(rec, root)
    val (_, df) = files(snap).maxBy(_._2.sizeBytes)
    val fields = snap.schema.fields
    def tailReads(size: Long): Int = {
      rec.clear()
      LanceFileReader.open(rec, df.path, df.major, df.minor, df.fileFields, size).close()
      rec.rangedReads.count(r => r._1 == df.path && r._2 + r._3 == df.sizeBytes)
    }
    assert(tailReads(df.sizeBytes + 1) == 1)
    assert(tailReads(0) == 1)
    assert(tailReads(df.sizeBytes) == 1) // the first open with the recorded size
    assert(tailReads(df.sizeBytes) == 0)
    assert(tailReads(df.sizeBytes + 1) == 1) // still a miss, and it replaces nothing
    assert(tailReads(df.sizeBytes) == 0)
    readAndCompare(rec, snap, expected)
    assert(fields.nonEmpty)
  }

  test("legacy (0.1) files are never kept") {
    val rec = new RecordingFileIO()
    val snap = snapshot(rec, copied("paged_legacy.lance"))
    val (_, df) = files(snap).head
    assert(df.major == 0 && df.minor < 3)
    (1 to 2).foreach { _ =>
      rec.clear()
      df.open(rec).close()
      assert(rec.rangedReads.nonEmpty)
    }
  }

  private def metaOf(path: Path): ContainerMeta = {
    val c = FileContainer.open(FixtureSupport.io.open(path.toString))
    try c.meta
    finally c.input.close()
  }

  private lazy val metas: Seq[ContainerMeta] = Seq("2.0", "2.1", "2.2").flatMap { fmt =>
    val dir = pages.resolve(s"paged_$fmt.lance").resolve("data")
    java.nio.file.Files.list(dir).toArray.toSeq.map(p => metaOf(p.asInstanceOf[Path]))
  }

  test("a large file's entry keeps its metadata region, a small file's the whole file") {
    metas.foreach { m =>
      val kept = m.forCache
      if (m.fileSize <= FileContainer.TailBytes) {
        assert(kept.tailStart == 0 && kept.tail.length == m.fileSize)
      } else {
        val starts = Seq(
          m.footer.columnMetaStart,
          m.footer.cmoTableStart,
          m.footer.gboTableStart
        ) ++ m.globalBuffers.map(_._1)
        assert(kept.tailStart == starts.min && kept.tail.length == m.fileSize - starts.min)
        assert(kept.weight < m.weight)
      }
      assert((0 until m.footer.numColumns).forall(i => kept.column(i) == m.column(i)))
    }
  }

  test("entries past the capacity go least recently used first; 0 keeps nothing") {
    val Seq(a, b, c) = metas.take(3).map(_.forCache)
    val cache = new FileMetadataCache(a.weight + b.weight + c.weight - 1, maxEntryShare = 1)
    cache.put(a); cache.put(b)
    assert(cache.get(a.path, a.fileSize).contains(a)) // a is now the most recently used
    cache.put(c)
    assert(cache.get(b.path, b.fileSize).isEmpty)
    assert(cache.get(a.path, a.fileSize).isDefined && cache.get(c.path, c.fileSize).isDefined)
    assert(cache.get(a.path, a.fileSize + 1).isEmpty, "another size is a miss")
    val s = cache.stats
    assert(s.entries == 2 && s.bytes == a.weight + c.weight && s.bytes <= cache.capacity)
    assert(s.hits == 3 && s.misses == 2, s"hits and misses count what get answers: $s")
    cache.setCapacity(a.weight)
    assert(cache.stats.entries <= 1 && cache.stats.bytes <= a.weight)
    cache.setCapacity(0)
    assert(cache.stats.entries == 0 && cache.get(c.path, c.fileSize).isEmpty)
    cache.put(a)
    assert(cache.stats.entries == 0)
  }

  test("an entry larger than its share of the capacity is not kept") {
    val a = metas.head.forCache
    val cache = new FileMetadataCache(8 * a.weight - 8)
    cache.put(a)
    assert(cache.stats.entries == 0)
    cache.setCapacity(8 * a.weight)
    cache.put(a)
    assert(cache.stats.entries == 1)
  }

  test("an entry of another kind under a path is a miss for both kinds of look-up") {
    val a = metas.head.forCache
    final case class Other(weight: Long) extends FileMetadataCache.Entry
    val cache = new FileMetadataCache(64 * a.weight)
    cache.putEntry(a.path, Other(1))
    assert(cache.get(a.path, a.fileSize).isEmpty)
    assert(cache.entryOf[Other](a.path).contains(Other(1)))
    cache.put(a)
    assert(cache.entryOf[Other](a.path).isEmpty)
    assert(cache.entryOf[ContainerMeta](a.path).contains(a))
    val s = cache.stats
    assert(s.hits == 2 && s.misses == 2, s"a look-up of the wrong kind counts as a miss: $s")
  }
}
