package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.{LanceErrors, LanceSchemaMismatchException}
import io.sparklance.spark.errors.SparkErrors
import io.sparklance.format.LanceField
import io.sparklance.format.blob.{BlobColumn, BlobPaths, BlobSidecars, ExternalBlobs}
import io.sparklance.format.writer._
import io.sparklance.storage.{
  BestEffort,
  FileIO,
  IoStats,
  OutputSink,
  Paths,
  RoutingFileIO,
  SerializableConf,
  StreamSink
}
import io.sparklance.spark.metrics.{DriverStorageRequests, StorageRequests, TaskMetricValue}
import io.sparklance.spark.shims.DriverMetricsWrite
import io.sparklance.spark.{ColumnEncodingProperties, LanceTable, LanceTableChanges, LanceTables}
import io.sparklance.table.{DatasetLayout, PrimaryKey, RowFilter, RowFilterEvaluator}
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}
import io.sparklance.table.txn

/**
 * Appends, or replaces the dataset when Spark truncates first (overwrite, INSERT OVERWRITE)
 * or the table is staged to be replaced (`replace`: REPLACE TABLE ... AS SELECT), or replaces
 * the rows matching a condition (`writeTo(t).overwrite(condition)`, `INSERT INTO t REPLACE
 * WHERE`; see [[ReplaceWhere]]). `tableOptions` (the table's path and storage options) are the
 * defaults the write's own options override.
 */
class LanceWriteBuilder(
    info: LogicalWriteInfo,
    tableOptions: Map[String, String],
    replace: Boolean = false,
    intent: WriteIntent = WriteIntent.Plain
) extends WriteBuilder with SupportsOverwriteV2 {
  private var overwrite = replace
  private var replacing = Array.empty[Predicate]
  private lazy val options = new CaseInsensitiveStringMap(
    (tableOptions ++ info.options().asCaseSensitiveMap().asScala).asJava
  )

  override def truncate(): WriteBuilder = { overwrite = true; replacing = Array.empty; this }

  /** Any condition: one the reader cannot evaluate is refused by name when the write plans. */
  override def canOverwrite(predicates: Array[Predicate]): Boolean = true

  override def overwrite(predicates: Array[Predicate]): WriteBuilder = {
    replacing = predicates; this
  }

  override def build(): Write = new DriverMetricsWrite {
    @volatile private var batch: LanceBatchWrite = _
    override def toBatch: BatchWrite = {
      batch = SparkErrors.spark(LanceBatchWrite.plan(
        options,
        info.schema(),
        overwrite,
        replacing,
        intent
      ))
      batch
    }
    // Lines without driver write metrics (3.5) show none of them.
    override def supportedCustomMetrics(): Array[CustomMetric] =
      if (DriverMetricsWrite.Supported) Array(new StorageRequests, new DriverStorageRequests)
      else Array.empty
    override protected def driverMetrics: Array[CustomTaskMetric] = Option(batch).toArray
      .flatMap(b =>
        Array[CustomTaskMetric](
          TaskMetricValue(StorageRequests.Name, b.taskRequests),
          TaskMetricValue(DriverStorageRequests.Name, b.driverRequests)
        )
      )
    override def description(): String = s"LanceWrite(${options.get("path")}, " +
      s"${if (replacing.nonEmpty) "replace where" else if (overwrite) "overwrite" else "append"})"
  }
}

/** What one task wrote: its data files, in order. */
final case class LanceTaskCommit(files: Seq[NewDataFile], requests: Long = 0L)
    extends WriterCommitMessage

/** Everything a task needs to write its files. */
final case class TaskPlan(
    root: String,
    fields: Seq[LanceField],
    sparkTypes: Seq[org.apache.spark.sql.types.DataType],
    ordinals: Seq[Int],
    version: FileVersion,
    options: LanceWriteOptions,
    conf: SerializableConf,
    /** Carried in every data file name of this job (see [[DataFileNames]]). */
    jobToken: String,
    /** Every row written must satisfy this (an overwrite by condition), named by `mustMatchText`. */
    mustMatch: Option[RowFilter] = None,
    mustMatchText: String = "",
    /** Blobs that leave the data files are managed objects under `_blobs/` (see [[BlobSidecars]]). */
    managedBlobs: Boolean = false,
    /** The dataset's non-root base paths (id, path): where external blob URIs may be relative. */
    externalBases: Seq[(Int, String)] = Nil
)

object LanceBatchWrite {

  /** Decides, on the driver and before any file is written, what this write will commit. */
  def plan(
      options: CaseInsensitiveStringMap,
      schema: StructType,
      truncate: Boolean,
      replacing: Array[Predicate] = Array.empty,
      intent: WriteIntent = WriteIntent.Plain
  ): LanceBatchWrite = {
    val opts = LanceWriteOptions.parse(options)
    if (schema.isEmpty)
      throw LanceErrors.unsupported(s"Cannot write to Lance dataset ${opts.path}: the DataFrame " +
        "has no columns")
    val spark = SparkSession.active
    val hadoop =
      spark.sessionState.newHadoopConfWithOptions(options.asCaseSensitiveMap().asScala.toMap)
    val io = new RoutingFileIO(hadoop)
    val root = Paths.stripTrailingSlash(opts.path)
    // A store where this write could not commit safely is refused before anything is written.
    txn.CommitHandler.forRoot(io, root)
    // The latest version as the save found it (when it is this write's dataset), else read.
    val existing = intent.found.filter(_.forall(s => Paths.stripTrailingSlash(s.root) == root))
      .getOrElse(txn.WritePlan.existing(io, root))
    if (existing.isDefined && intent.createOnly) throw LanceErrors.datasetExists(root)
    opts.branch.filter(_ => existing.isEmpty).foreach { b =>
      throw LanceErrors.invalidOption(
        LanceWriteOptions.Branch,
        b,
        s"the dataset has no branch " +
          s"'$b' (no dataset at $root); create it first (create_branch)"
      )
    }
    val condition = intent.replaceWhere
    // The rows to replace, read from the version the write starts from.
    val replaceFilter: Option[(RowFilter, String)] = existing.flatMap { s =>
      if (replacing.nonEmpty) Some(ReplaceWhere.fromPredicates(s, replacing))
      else condition.map { c =>
        val read = options.asCaseSensitiveMap().asScala.toMap.filter { case (k, _) =>
          !k.equalsIgnoreCase("path")
        }
        (ReplaceWhere.fromCondition(spark, read, root, c), c)
      }
    }
    existing.filter(_ => !truncate && opts.primaryKey.nonEmpty).foreach { s =>
      val key = PrimaryKey.paths(s.schema)
      if (key != opts.primaryKey)
        throw LanceErrors.invalidOption(
          LanceWriteOptions.PrimaryKey,
          opts.primaryKey.mkString(","),
          s"the dataset's primary key is " +
            s"${if (key.isEmpty) "not set" else key.mkString(",")}; an append does not change " +
            s"it (ALTER TABLE SET TBLPROPERTIES ('${LanceTableChanges.PrimaryKeyKey}' = ...) " +
            "sets a key once)"
        )
    }
    val (write, ordinals) = existing match {
      case Some(s) if replaceFilter.isDefined =>
        val matched = SparkToLance.matchForAppend(root, s.schema, schema)
        val (filter, text) = replaceFilter.get
        (
          txn.WritePlan.replaceWhere(s, opts.dataStorageVersion, matched.map(_._1), filter, text),
          matched.map(_._2)
        )
      case Some(s) if !truncate && opts.mergeSchema && newColumns(s, schema).nonEmpty =>
        val version = txn.WritePlan.replaceVersion(root, Some(s), None)
        val added = StructType(newColumns(s, schema).map(_.copy(nullable = true)))
        val protos =
          SchemaProtos.toProto(SparkToLance.fields(opts.withVectorColumns(added), version))
        val (plan, after) = txn.WritePlan.appendWithColumns(s, opts.dataStorageVersion, protos)
        val matched = SparkToLance.matchForAppend(root, after, schema)
        (plan(matched.map(_._1)), matched.map(_._2))
      case Some(s) if !truncate =>
        val matched = SparkToLance.matchForAppend(root, s.schema, schema)
        (txn.WritePlan.append(s, opts.dataStorageVersion, matched.map(_._1)), matched.map(_._2))
      case _ =>
        val version = txn.WritePlan.replaceVersion(root, existing, opts.dataStorageVersion)
        val encoded =
          ColumnEncodingProperties.applyTo(schema, options.asCaseSensitiveMap().asScala.toMap, root)
        val fields = PrimaryKey.mark(
          root,
          SparkToLance.fields(opts.withVectorColumns(encoded), version),
          opts.primaryKey
        )
        // Creating (append to an empty path included) never replaces a dataset that appears
        // meanwhile.
        val mustCreate = existing.isEmpty && (intent.createOnly || !truncate)
        (
          txn.WritePlan.replace(
            root,
            existing,
            fields,
            opts.dataStorageVersion,
            mustCreate,
            intent.tableConfig
          ),
          fields.indices
        )
    }
    val fields = write.fields
    val version = write.fileVersion
    val sparkTypes = ordinals.map(i => schema.fields(i).dataType)
    val plan = TaskPlan(
      root,
      fields,
      sparkTypes,
      ordinals,
      version,
      opts,
      new SerializableConf(hadoop),
      DataFileNames.newToken(),
      replaceFilter.map(_._1),
      replaceFilter.fold("")(_._2),
      write.managedBlobs,
      existing.filter(_ => !truncate).map(LanceBatchWrite.externalBases).getOrElse(Nil)
    )
    new LanceBatchWrite(plan, io, write, opts)
  }

  /** The base paths of `s` that are not dataset roots: where external blobs may live. */
  def externalBases(s: io.sparklance.table.Snapshot): Seq[(Int, String)] =
    s.manifest.getBasePathsList.asScala.filterNot(_.getIsDatasetRoot)
      .map(b => b.getId -> b.getPath).toSeq

  /** The DataFrame's top-level columns the dataset lacks (names compared as appends match). */
  private def newColumns(s: io.sparklance.table.Snapshot, schema: StructType) =
    schema.fields.toSeq.filterNot(f => s.schema.fields.exists(_.name.equalsIgnoreCase(f.name)))
}

class LanceBatchWrite(plan: TaskPlan, io: FileIO, write: txn.WritePlan, opts: LanceWriteOptions)
    extends BatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new LanceDataWriterFactory(plan)
  override def useCommitCoordinator(): Boolean = true

  /** This driver thread's request count when the write was planned. */
  private val requestsAtPlan = IoStats.get.requests
  @volatile private var requestsAtCommit = -1L

  /** Requests sent to plan and commit this write (counted on the driver's thread). */
  def driverRequests: Long =
    (if (requestsAtCommit >= 0) requestsAtCommit else IoStats.get.requests) - requestsAtPlan

  /** Requests the tasks sent to storage (their data files' PUTs, parts and retries). */
  @volatile var taskRequests = 0L

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    taskRequests = messages.collect { case LanceTaskCommit(_, n) => n }.sum
    try commitFiles(messages)
    finally requestsAtCommit = IoStats.get.requests
  }

  private def commitFiles(messages: Array[WriterCommitMessage]): Unit = {
    val files = messages.toSeq.flatMap { case LanceTaskCommit(fs, _) => fs; case _ => Nil }
    val frags = files.map(NewFragment(_))
    // commitRetries counts attempts, the first one included.
    val plain = txn.CommitOptions(
      maxRetries = opts.commitRetries - 1,
      maxRetryTime = scala.concurrent.duration.Duration(opts.commitTimeoutSeconds, "s"),
      enableStableRowIds = opts.enableStableRowIds
    )
    val commitOpts = opts.commitMessage.fold(plain)(plain.withCommitMessage)
    try write.commit(io, frags, commitOpts)
    catch {
      case e: Throwable =>
        LanceDataWriter.deleteQuietly(io, plan.root, files)
        sweep()
        throw e
    }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    val files = messages.toSeq.flatMap { case LanceTaskCommit(fs, _) => fs; case _ => Nil }
    LanceDataWriter.deleteQuietly(io, plan.root, files)
    // Tasks killed when the job failed may still be closing files they never reported:
    // sweep this job's files (found by its token) a few times while they wind down.
    var i = 0
    while (i < 4) {
      sweep();
      try Thread.sleep(250)
      catch { case _: InterruptedException => }; i += 1
    }
    sweep()
  }

  /** Deletes every data file carrying this job's token; none is referenced, since the job committed nothing. */
  private def sweep(): Unit = {
    LanceDataWriter.sweepJob(io, plan.root, plan.jobToken, Set.empty)
    if (plan.managedBlobs) LanceDataWriter.sweepManagedBlobs(io, plan.root, plan.jobToken)
  }
}

class LanceDataWriterFactory(plan: TaskPlan) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new LanceDataWriter(plan)
}

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
