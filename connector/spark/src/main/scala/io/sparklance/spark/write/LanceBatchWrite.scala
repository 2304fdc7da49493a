package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.format.writer._
import io.sparklance.storage.{FileIO, IoStats, Paths, RoutingFileIO, SerializableConf}
import io.sparklance.spark.{ColumnEncodingProperties, LanceTableChanges}
import io.sparklance.table.{PrimaryKey, RowFilter}
import io.sparklance.table.commit.{DataFileNames, NewFragment}
import io.sparklance.table.txn

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
