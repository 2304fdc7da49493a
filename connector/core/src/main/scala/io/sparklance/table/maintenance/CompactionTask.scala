package io.sparklance.table.maintenance

import scala.collection.mutable

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, ColumnArrays, LanceField}
import io.sparklance.format.blob.BlobColumn
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.storage.{BestEffort, FileIO, Paths, StreamSink}
import io.sparklance.table.{
  DatasetLayout,
  DeletionVector,
  FragmentLineage,
  FragmentReader,
  FragmentRef,
  Snapshot
}
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}

/**
 * Rewrites one compaction group: the live rows of its fragments, in order, into one new
 * data file (a new one only past `maxBytesPerFile`), one fragment each — pylance 14 writes
 * one fragment per group whatever the target (observed: 28 rows at a target of 15) — in the
 * dataset's file version and schema (columns no old file held are written as nulls). Runs
 * anywhere the data is reachable (a Spark task); writes data files only — the driver
 * commits, or deletes them when the commit fails. A task that fails deletes what it wrote.
 */
final case class CompactionTask(
    root: String,
    fragments: Seq[FragmentRef],
    fields: Seq[LanceField],
    version: FileVersion,
    stableRowIds: Boolean,
    options: CompactionOptions,
    jobToken: String
) {
  import CompactionTask.LineageArrays

  def run(io: FileIO): Seq[CompactedFragment] = {
    fields.find(BlobColumn.containsBlob).foreach { f =>
      throw LanceErrors.unsupported(s"Cannot compact Lance dataset $root: column '${f.name}' " +
        "holds blobs, which compaction does not rewrite yet")
    }
    val out = new Output(io)
    try {
      fragments.foreach { ref =>
        val lineage = if (stableRowIds) Some(lineageOf(ref)) else None
        val reader =
          new FragmentReader(io, ref, fields, DeletionVector.read(io, ref), 0L, ref.physicalRows)
        val offsets = new Array[Long](CompactionTask.Batch)
        try while (reader.remaining > 0) {
            val n = math.min(reader.remaining, CompactionTask.Batch.toLong).toInt
            val (cols, kept) = reader.next(n)
            if (kept > 0) {
              reader.keptOffsets(offsets, kept)
              out.add(cols, kept, lineage, offsets)
            }
          }
        finally reader.close()
      }
      out.finish()
    } catch {
      case e: Throwable => out.abort(); throw e
    }
  }

  /** The group's new file (more only past the byte limit), and its rows' lineage. */
  private final class Output(io: FileIO) {
    private val dataDir = DatasetLayout.dataDir(root)
    private val done = mutable.ArrayBuffer.empty[CompactedFragment]
    private var writer: LanceFileWriter = _
    private var name: String = _
    private val ids = mutable.ArrayBuilder.make[Long]
    private val created = mutable.ArrayBuilder.make[Long]
    private val updated = mutable.ArrayBuilder.make[Long]

    def add(
        cols: Array[ColumnArray],
        n: Int,
        lineage: Option[LineageArrays],
        offsets: Array[Long]
    ): Unit = {
      // Dictionary-decoded strings come back as ids into a page's dictionary: the writer
      // takes the values (and picks its own encoding, as for any write).
      val values = cols.map(ColumnArrays.materialize)
      var from = 0
      while (from < n) {
        if (writer == null) open()
        val part = if (from == 0) values else values.map(ColumnArrays.slice(_, from, n - from))
        // A file takes fewer rows when a dictionary column would outgrow its keys.
        val took = writer.writeSome(part)
        lineage.foreach { l =>
          var i = from
          while (i < from + took) {
            val o = offsets(i).toInt
            ids += l.ids(o); created += l.created(o); updated += l.updated(o)
            i += 1
          }
        }
        from += took
        if (from < n || writer.bytesWritten >= options.maxBytesPerFile) close()
      }
    }

    private def open(): Unit = {
      name = DataFileNames.next(jobToken)
      val path = Paths.join(dataDir, name)
      writer = new LanceFileWriter(new StreamSink(io.create(path)), fields, version, name = path)
    }

    private def close(): Unit = {
      val w = writer
      writer = null
      val f =
        try w.finish()
        finally w.close()
      done += CompactedFragment(
        NewFragment(NewDataFile(
          name,
          f.fieldIds,
          f.columnIndices,
          version.major,
          version.minor,
          f.sizeBytes,
          f.numRows
        )),
        ids.result(),
        created.result(),
        updated.result()
      )
      ids.clear(); created.clear(); updated.clear()
    }

    def finish(): Seq[CompactedFragment] = {
      if (writer != null) close()
      done.toSeq
    }

    /** Deletes every file this task wrote. */
    def abort(): Unit = {
      BestEffort.close(writer)
      writer = null
      (done.map(_.fragment.file.path) ++ Option(name)).distinct
        .foreach(n => BestEffort.delete(io, Paths.join(dataDir, n)))
    }
  }

  private def lineageOf(ref: FragmentRef): LineageArrays = {
    def missing = LanceErrors.corruptFile(
      root,
      s"fragment ${ref.id} of a dataset with stable row ids has no row ids"
    )
    val l = ref.lineage.getOrElse(throw missing)
    val rows = ref.physicalRows.toInt
    LineageArrays(
      l.decodeRowIds().getOrElse(throw missing),
      l.decodeCreatedAt(rows),
      l.decodeUpdatedAt(rows)
    )
  }
}

object CompactionTask {

  /** A fragment's lineage decoded per physical row. */
  private final case class LineageArrays(
      ids: Array[Long],
      created: Array[Long],
      updated: Array[Long]
  )

  /** Rows read per batch. */
  val Batch = 8192

  /** The task for `group` of the version `s`. */
  def of(
      s: Snapshot,
      group: CompactionGroup,
      stable: Boolean,
      options: CompactionOptions,
      jobToken: String
  ): CompactionTask = {
    val refs = group.fragments.map { f =>
      val r = FragmentRef(s.root, s, f)
      if (stable) r.copy(lineage = Some(FragmentLineage.of(f))) else r
    }
    CompactionTask(
      s.root,
      refs,
      s.schema.fields,
      FileVersion.ofDataset(s.dataStorageVersion, s.root),
      stable,
      options,
      jobToken
    )
  }
}
