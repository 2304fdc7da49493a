package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._

import io.sparklance.{LanceErrors, LanceSchemaMismatchException}
import io.sparklance.format.blob.{BlobPaths, BlobSidecars, ExternalBlobs}
import io.sparklance.format.writer._
import io.sparklance.storage.{
  BestEffort,
  FileIO,
  IoStats,
  OutputSink,
  Paths,
  RoutingFileIO,
  StreamSink
}
import io.sparklance.table.{DatasetLayout, RowFilterEvaluator}
import io.sparklance.table.commit.{DataFileNames, NewDataFile}

/**
 * Writes one task's rows: batches of rows become column arrays, data files roll over at
 * `max_rows_per_file` / `max_bytes_per_file`, and the file list goes back to the driver.
 * On abort (or a failure) the task's files are deleted.
 */
class LanceDataWriter(plan: TaskPlan) extends DataWriter[InternalRow] {
  private val requestsAtStart = IoStats.get.requests
  private val BatchRows = 4096
  private val BatchBytes = 8L * 1024 * 1024
  private val dataDir = DatasetLayout.dataDir(plan.root)
  private val batcher = new RowBatcher(plan.fields, plan.sparkTypes, plan.ordinals)
  private val done = scala.collection.mutable.ArrayBuffer[NewDataFile]()

  /** Managed blob objects written for the current file (see [[NewDataFile.blobObjects]]). */
  private val managedWritten = scala.collection.mutable.ArrayBuffer[String]()
  private var current: LanceFileWriter = _
  private var currentName: String = _
  private var currentRows = 0L

  /** The last file's writer, finished: the next file takes over its page buffers. */
  private var finished: LanceFileWriter = _
  private lazy val store: FileIO = new RoutingFileIO(plan.conf.value)

  /** Blob rows can be many MiB each: then the batch size is checked after every row, not every 64. */
  private val checkEvery =
    if (plan.fields.exists(_root_.io.sparklance.format.blob.BlobColumn.containsBlob)) 1 else 64

  override def write(row: InternalRow): Unit =
    try {
      batcher.add(row)
      if (
        batcher.rows >= BatchRows || (batcher.rows % checkEvery == 0 && batcher.bytes >= BatchBytes)
      ) flushBatch()
    } catch {
      // The row converters do not know the dataset: name it.
      case e: LanceSchemaMismatchException => throw e.at(plan.root)
    }

  /** Checks the rows of an overwrite by condition: each must satisfy it. */
  private lazy val mustMatch = plan.mustMatch.map(f =>
    new RowFilterEvaluator(f, plan.fields.map(x => x.name -> x).toMap)
  )

  private def flushBatch(): Unit = {
    if (batcher.rows == 0) return
    var arrays = batcher.build()
    var offset = 0
    val n = arrays(0).length
    mustMatch.foreach { e =>
      val byName = plan.fields.map(_.name).zip(arrays).toMap
      if (e.evaluate(byName, n).contains(false))
        throw LanceErrors.replaceWhereMismatch(plan.root, plan.mustMatchText)
    }
    while (offset < n) {
      if (current == null) open()
      val room = (plan.options.maxRowsPerFile - currentRows).min(Int.MaxValue).toInt
      val take = math.min(room, n - offset)
      val part = if (offset == 0 && take == n) arrays
      else arrays.map(a => io.sparklance.format.ColumnArrays.slice(a, offset, take))
      // A file takes fewer rows when a dictionary column would outgrow its keys: the rest
      // go to the next file.
      val took = current.writeSome(part)
      currentRows += took
      offset += took
      if (
        took < take || currentRows >= plan.options.maxRowsPerFile ||
        current.bytesWritten >= plan.options.maxBytesPerFile
      ) closeFile()
    }
    arrays = null
  }

  private def open(): Unit = {
    currentName = DataFileNames.next(plan.jobToken)
    val dataFile = Paths.join(dataDir, currentName)
    val out = store.create(dataFile)
    val sidecars = new BlobSidecars {
      def create(blobId: Int): OutputSink =
        new StreamSink(store.create(BlobPaths.sidecar(dataFile, blobId)))
      override def managed: Boolean = plan.managedBlobs
      override def createManaged(): (String, OutputSink) = {
        val rel = BlobPaths.newManaged(plan.jobToken)
        managedWritten += rel
        (rel, new StreamSink(store.create(Paths.join(plan.root, rel))))
      }
      override def externals: ExternalBlobs = ExternalBlobs(
        plan.externalBases,
        plan.options.allowExternalBlobsOutsideBases,
        plan.options.ingestExternalBlobs
      )
      override def readExternal(uri: String, position: Long, size: Long): Array[Byte] =
        LanceDataWriter.readExternal(store, uri, position, size)
    }
    // The task's previous file's buffers, or those an earlier task of this executor left.
    val previous =
      if (finished != null) finished else FinishedWriters.take(plan.fields, plan.version)
    current = new LanceFileWriter(
      new StreamSink(out),
      plan.fields,
      plan.version,
      plan.options.fileWriterOptions,
      sidecars,
      previous = previous,
      name = dataFile
    )
    finished = null
    currentRows = 0
  }

  private def closeFile(): Unit = {
    val w = current
    current = null
    val written =
      try w.finish()
      finally w.close()
    finished = w
    done += NewDataFile(
      currentName,
      written.fieldIds,
      written.columnIndices,
      plan.version.major,
      plan.version.minor,
      written.sizeBytes,
      written.numRows,
      managedWritten.toList
    )
    managedWritten.clear()
  }

  override def commit(): WriterCommitMessage = {
    flushBatch()
    if (current != null) closeFile()
    FinishedWriters.give(finished)
    finished = null
    TaskOutputMetrics.add(done.map(_.sizeBytes).sum, done.map(_.rows).sum)
    // Spark reads a writer's metrics before its commit, which writes the last file: the
    // task's requests reach the driver with its files instead.
    LanceTaskCommit(done.toList, IoStats.get.requests - requestsAtStart)
  }

  override def abort(): Unit = {
    // A killed task is interrupted; clear the flag so the cleanup's file operations still run.
    val interrupted = Thread.interrupted()
    try {
      if (current != null) {
        BestEffort.close(current)
        done += NewDataFile(
          currentName,
          Array.empty,
          Array.empty,
          0,
          0,
          0,
          0,
          managedWritten.toList
        )
        current = null
      }
      LanceDataWriter.deleteQuietly(store, plan.root, done.toSeq)
      done.clear()
      managedWritten.clear()
    } finally if (interrupted) Thread.currentThread().interrupt()
  }

  override def close(): Unit = if (current != null) {
    BestEffort.close(current)
    current = null
  }
}
object LanceDataWriter {

  /** Deletes what `files` wrote (data files, blob sidecars and objects): see DatasetLayout. */
  def deleteQuietly(io: FileIO, root: String, files: Seq[NewDataFile]): Unit =
    files.foreach(f => DatasetLayout.deleteUncommitted(io, root, f.path, f.blobObjects))

  /**
   * Deletes the data files (and their blob sidecars) carrying job `token` but for those named
   * in `keep`: what a failed job, or a job's failed task attempts, left behind.
   */
  def sweepJob(io: FileIO, root: String, token: String, keep: Set[String]): Unit = {
    val dir = DatasetLayout.dataDir(root)
    BestEffort.run(s"sweep the files of job $token from $dir")(io.list(dir).foreach { e =>
      if (!e.isDirectory && DataFileNames.ofJob(e.name, token) && !keep(e.name))
        BestEffort.delete(io, e.path)
      // A blob sidecar directory is named after its data file, without ".lance".
      val file = e.name + ".lance"
      if (e.isDirectory && DataFileNames.ofJob(file, token) && !keep(file))
        DatasetLayout.deleteSidecars(io, e.path + ".lance")
    })
  }

  /** The bytes `[position, +size)` of the object at `uri` (`size` -1: to its end). */
  def readExternal(io: FileIO, uri: String, position: Long, size: Long): Array[Byte] = {
    val in = io.open(uri)
    try {
      val n = if (size >= 0) size else in.length - position
      if (position + n > in.length || n > Int.MaxValue - 64)
        throw LanceErrors.unsupported(s"External blob $uri: range [$position, +$n) is not " +
          s"within its ${in.length} bytes (or exceeds 2 GiB)")
      val out = new Array[Byte](n.toInt)
      in.readInto(position, out, 0, out.length)
      out
    } finally in.close()
  }

  /**
   * Deletes the managed blob objects of job `token` (see [[BlobPaths.newManaged]]): those of
   * tasks that were still writing when the job failed, which no commit message names.
   */
  def sweepManagedBlobs(io: FileIO, root: String, token: String): Unit = {
    val dir = DatasetLayout.blobsDir(root)
    BestEffort.run(s"sweep the blob objects of job $token from $dir")(io.list(dir).foreach {
      e =>
        if (!e.isDirectory && BlobPaths.isManagedOfJob(e.name, token)) BestEffort.delete(io, e.path)
    })
  }
}
