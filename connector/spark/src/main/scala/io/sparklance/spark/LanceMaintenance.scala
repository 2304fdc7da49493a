package io.sparklance.spark

import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{
  Branches,
  DatasetLayout,
  LanceDataset,
  ManifestSummary,
  Tags,
  VersionSpec
}
import io.sparklance.table.maintenance.{
  CleanupOldVersions,
  CleanupPolicy,
  Compaction,
  CompactionOptions
}
import io.sparklance.table.txn.{Committer, Restore}

/**
 * Table maintenance for a Lance dataset by path, from the driver: what the Python package's
 * `cleanup_old_versions`, `create_tag`, ... call (argument names and results are pylance's).
 * Storage settings come from the session's Hadoop configuration plus `options`.
 */
object LanceMaintenance {

  /** Storage for `path`: the session's settings, then `options`, then its URI query's. */
  private def fileIO(
      spark: SparkSession,
      path: String,
      options: java.util.Map[String, String]
  ): FileIO = {
    val passed = Option(options).map(_.asScala.toMap).getOrElse(Map.empty[String, String])
    val settings = passed ++ DatasetLayout.splitQuery(path)._2
    LanceTables.fileIO(spark, new CaseInsensitiveStringMap(settings.asJava))
  }

  /** The dataset root `path` names: without its URI query (`s3+ddb://...?ddbTableName=t`). */
  private def rootOf(path: String): String =
    Paths.stripTrailingSlash(DatasetLayout.splitQuery(path)._1)

  /**
   * pylance's `cleanup_old_versions`; `olderThanSeconds` and `retainVersions` may be null.
   * Returns pylance's CleanupStats fields, and with `dryRun` the files that would go.
   */
  def cleanupOldVersions(
      spark: SparkSession,
      path: String,
      olderThanSeconds: java.lang.Double,
      retainVersions: Integer,
      deleteUnverified: Boolean,
      errorIfTaggedOldVersions: Boolean,
      dryRun: Boolean,
      options: java.util.Map[String, String]
  ): java.util.Map[String, Any] = {
    val policy = CleanupPolicy(
      Option(olderThanSeconds).map(s => (s.doubleValue * 1e6).toLong.micros),
      Option(retainVersions).map(_.intValue),
      deleteUnverified,
      errorIfTaggedOldVersions
    )
    val s =
      CleanupOldVersions(fileIO(spark, path, options), rootOf(path), policy, dryRun)
    Map[String, Any](
      "bytes_removed" -> s.bytesRemoved,
      "old_versions" -> s.oldVersions,
      "data_files_removed" -> s.dataFilesRemoved,
      "transaction_files_removed" -> s.transactionFilesRemoved,
      "index_files_removed" -> s.indexFilesRemoved,
      "deletion_files_removed" -> s.deletionFilesRemoved,
      "files" -> s.files.asJava
    ).asJava
  }

  /**
   * pylance's `versions()`, as JSON for Python: for each version its number, commit time
   * (nanoseconds since the epoch) and `metadata` (see [[ManifestSummary]]).
   */
  def versions(
      spark: SparkSession,
      path: String,
      options: java.util.Map[String, String]
  ): String = {
    val dataset = LanceDataset.open(fileIO(spark, path, options), rootOf(path))
    dataset.versions().map { vf =>
      val s = dataset.open(VersionSpec.Number(vf.version))
      val meta = ManifestSummary.of(s.manifest).toSeq.sorted
        .map { case (k, v) => s"${str(k)}:${str(v)}" }.mkString("{", ",", "}")
      val t = s.manifest.getTimestamp
      val nanos = if (!s.manifest.hasTimestamp) 0L else t.getSeconds * 1000000000L + t.getNanos
      s"""{"version":${vf.version},"timestamp_nanos":$nanos,"metadata":$meta}"""
    }.mkString("[", ",", "]")
  }

  /** The latest version of the dataset at `path`. */
  def latestVersion(
      spark: SparkSession,
      path: String,
      options: java.util.Map[String, String]
  ): Long =
    LanceDataset.open(fileIO(spark, path, options), rootOf(path))
      .open(VersionSpec.Latest).version

  /**
   * pylance's `ds.restore()` of version `version` (a number or a tag name): a new version
   * holding that version's data, schema, config and indices. Returns the new version.
   */
  def restore(
      spark: SparkSession,
      path: String,
      version: String,
      options: java.util.Map[String, String]
  ): Long = {
    val io = fileIO(spark, path, options)
    val root = rootOf(path)
    val ds = LanceDataset.open(io, root)
    val v = version.trim
    val target = ds.open(if (v.nonEmpty && v.forall(_.isDigit)) VersionSpec.Number(v.toLong)
    else VersionSpec.TagName(v)).version
    new Committer(io, root).commit(Some(ds.open(VersionSpec.Latest)), Restore(target)).version
  }

  /**
   * pylance's `optimize.compact_files(...)`: small fragments and fragments with many deleted
   * rows rewritten as Lance's planner groups them, one Spark task per group; the driver
   * commits (ReserveFragments, then Rewrite). Null arguments take pylance's defaults.
   * Returns pylance's CompactionMetrics fields, plus `indexed_fragments_skipped`.
   */
  def compactFiles(
      spark: SparkSession,
      path: String,
      targetRowsPerFragment: Number,
      maxRowsPerGroup: Number,
      maxBytesPerFile: Number,
      materializeDeletions: java.lang.Boolean,
      materializeDeletionsThreshold: Number,
      deferIndexRemap: java.lang.Boolean,
      options: java.util.Map[String, String]
  ): java.util.Map[String, Long] = {
    val d = CompactionOptions()
    val opts = CompactionOptions(
      Option(targetRowsPerFragment).map(_.longValue).getOrElse(d.targetRowsPerFragment),
      Option(maxRowsPerGroup).map(_.intValue).getOrElse(d.maxRowsPerGroup),
      Option(maxBytesPerFile).map(_.longValue).getOrElse(d.maxBytesPerFile),
      Option(materializeDeletions).map(_.booleanValue).getOrElse(d.materializeDeletions),
      Option(materializeDeletionsThreshold).map(_.doubleValue)
        .getOrElse(d.materializeDeletionsThreshold),
      Option(deferIndexRemap).exists(_.booleanValue)
    )
    val io = fileIO(spark, path, options)
    val runner: Compaction.Runner = tasks =>
      if (tasks.size <= 1) Compaction.inThisThread(io)(tasks)
      else {
        spark.sparkContext.setJobDescription(s"Lance compaction of $path")
        try spark.sparkContext.parallelize(tasks.zipWithIndex, tasks.size)
            .map { case (t, i) => i -> t.run(io) }.collect().sortBy(_._1).map(_._2).toSeq
        finally spark.sparkContext.setJobDescription(null)
      }
    val m = Compaction(io, rootOf(path), opts, runner)
    Map(
      "fragments_removed" -> m.fragmentsRemoved,
      "fragments_added" -> m.fragmentsAdded,
      "files_removed" -> m.filesRemoved,
      "files_added" -> m.filesAdded,
      "indexed_fragments_skipped" -> m.indexedFragmentsSkipped
    ).asJava
  }

  def createTag(
      spark: SparkSession,
      path: String,
      tag: String,
      version: Long,
      options: java.util.Map[String, String]
  ): Unit =
    Tags.create(fileIO(spark, path, options), rootOf(path), tag, version)

  def updateTag(
      spark: SparkSession,
      path: String,
      tag: String,
      version: Long,
      options: java.util.Map[String, String]
  ): Unit =
    Tags.update(fileIO(spark, path, options), rootOf(path), tag, version)

  def deleteTag(
      spark: SparkSession,
      path: String,
      tag: String,
      options: java.util.Map[String, String]
  ): Unit =
    Tags.delete(fileIO(spark, path, options), rootOf(path), tag)

  /** pylance's `create_branch(branch, version)` from a version of the main branch. */
  def createBranch(
      spark: SparkSession,
      path: String,
      branch: String,
      version: Long,
      options: java.util.Map[String, String]
  ): Unit =
    createBranch(spark, path, branch, null, version, options)

  /**
   * pylance's `create_branch(branch, (parent, version))`: from a version of branch `parent`
   * (the main branch when null).
   */
  def createBranch(
      spark: SparkSession,
      path: String,
      branch: String,
      parent: String,
      version: Long,
      options: java.util.Map[String, String]
  ): Unit =
    Branches.create(
      fileIO(spark, path, options),
      rootOf(path),
      branch,
      version,
      Option(parent).filter(_.nonEmpty)
    )

  /** pylance's `branches.delete(branch)`: the ref and the branch's own files. */
  def deleteBranch(
      spark: SparkSession,
      path: String,
      branch: String,
      options: java.util.Map[String, String]
  ): Unit =
    Branches.delete(fileIO(spark, path, options), rootOf(path), branch)

  /**
   * pylance's `branches.list()`, as JSON for Python: name -> parent_branch, parent_version,
   * create_at, manifest_size, branch_identifier.
   */
  def listBranches(
      spark: SparkSession,
      path: String,
      options: java.util.Map[String, String]
  ): String = {
    Branches.list(fileIO(spark, path, options), rootOf(path)).map { b =>
      val ids = b.versionMapping.map { case (v, id) => s"[$v,${str(id)}]" }.mkString("[", ",", "]")
      val parent = b.parentBranch.map(str).getOrElse("null")
      s"""${str(b.name)}:{"parent_branch":$parent,"parent_version":${b.parentVersion},""" +
        s""""create_at":${b.createAt},"manifest_size":${b.manifestSize},""" +
        s""""branch_identifier":$ids}"""
    }.mkString("{", ",", "}")
  }

  /** tag name -> version, as pylance's `tags.list()` names them. */
  def listTags(
      spark: SparkSession,
      path: String,
      options: java.util.Map[String, String]
  ): java.util.Map[String, java.lang.Long] =
    Tags.list(fileIO(spark, path, options), rootOf(path))
      .map(t => t.name -> java.lang.Long.valueOf(t.version)).toMap.asJava

  /** `v` as a JSON string (quotes, backslashes and control characters escaped). */
  private def str(v: String): String =
    "\"" + new String(com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance
      .quoteAsString(v)) + "\""
}
