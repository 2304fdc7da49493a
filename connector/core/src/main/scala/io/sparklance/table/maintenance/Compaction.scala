package io.sparklance.table.maintenance

import org.slf4j.LoggerFactory

import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{FeatureFlags, LanceDataset, RowIdSequences, Snapshot, VersionSpec}
import io.sparklance.table.commit.DataFileNames
import io.sparklance.table.txn.{CommitOptions, Committer, ManifestBuilder, ReserveFragments,
  Rewrite, RewriteGroup}

/**
 * `compact_files` as pylance 14 does it: plan from the latest version (CompactionPlanner),
 * rewrite each group (CompactionTask, run by `runner`: in this thread, or as Spark tasks),
 * commit a ReserveFragments for the new fragments' ids, then a Rewrite read at the planned
 * version. Nothing is committed when there is nothing to compact. Should the Rewrite lose
 * to a concurrent change of the same fragments, the error reaches the caller (pylance does
 * not retry compaction either) — but unlike pylance, which leaves them for cleanup, the
 * rewritten files are deleted at once; the reservation stays committed, as pylance's does.
 */
object Compaction {
  private val log = LoggerFactory.getLogger(getClass)

  /** Runs compaction tasks and returns each one's new fragments, in task order. */
  type Runner = Seq[CompactionTask] => Seq[Seq[CompactedFragment]]

  /** Runs the tasks one after another in this thread. */
  def inThisThread(io: FileIO): Runner = _.map(_.run(io))

  /**
   * Compacts the dataset at `root0` as planned from version `read` (the latest when None)
   * and returns pylance's metrics.
   */
  def apply(io: FileIO, root0: String, options: CompactionOptions = CompactionOptions(),
      runner: Runner = null, commitOptions: CommitOptions = CommitOptions(),
      read: Option[Snapshot] = None): CompactionMetrics = {
    val root = Paths.stripTrailingSlash(root0)
    val opts = options.validated()
    val s = read.getOrElse(LanceDataset.open(io, root).open(VersionSpec.Latest))
    val stable = (s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0
    ManifestBuilder.checkWritable(s, Rewrite(Nil))
    val plan = CompactionPlanner.plan(io, s, opts)
    if (plan.indexedFragmentsSkipped > 0)
      log.warn(s"Compaction of $root leaves ${plan.indexedFragmentsSkipped} fragment(s) " +
        "alone: indices cover them, and their index files would need remapping")
    if (plan.groups.isEmpty)
      return CompactionMetrics(0, 0, 0, 0, plan.indexedFragmentsSkipped)
    val token = DataFileNames.newToken()
    val tasks = plan.groups.map(CompactionTask.of(s, _, stable, opts, token))
    val results = Option(runner).getOrElse(inThisThread(io))(tasks)
    try {
      val metrics = commit(io, root, s, plan, results, stable, commitOptions)
      log.info("Compacted {}: {} fragment(s) into {} at read version {}", root,
        Long.box(metrics.fragmentsRemoved), Long.box(metrics.fragmentsAdded),
        Long.box(s.version))
      metrics
    } catch {
      case e: Throwable =>
        val files = results.flatten.map(_.fragment.file.path)
        log.warn(s"Compaction of $root did not commit; deleting its ${files.size} new data " +
          "file(s)")
        files.foreach(f => try io.delete(Paths.join(Paths.join(root, "data"), f)) catch {
          case _: Throwable =>
        })
        throw e
    }
  }

  private def commit(io: FileIO, root: String, s: Snapshot, plan: CompactionPlan,
      results: Seq[Seq[CompactedFragment]], stable: Boolean, commitOptions: CommitOptions)
      : CompactionMetrics = {
    val total = results.map(_.size).sum
    val committer = new Committer(io, root, commitOptions)
    val reserved = committer.commit(Some(s), ReserveFragments(total))
    val onto = LanceDataset.open(io, root).open(VersionSpec.Number(reserved.version))
    var next = (onto.manifest.getMaxFragmentId & 0xffffffffL) - total + 1
    val groups = plan.groups.zip(results).map { case (g, frags) =>
      RewriteGroup(g.fragments, frags.map { cf =>
        val p = cf.fragment.toProto(next).toBuilder
        next += 1
        if (stable) {
          p.setInlineRowIds(RowIdSequences.encode(cf.rowIds).toByteString)
          if (cf.rowIds.nonEmpty)
            p.setInlineCreatedAtVersions(RowIdSequences.encodeVersions(cf.createdAt))
              .setInlineLastUpdatedAtVersions(RowIdSequences.encodeVersions(cf.updatedAt))
        }
        p.build()
      })
    }
    committer.commitOn(Some(s), Some(onto), Rewrite(groups))
    val old = plan.groups.flatMap(_.fragments)
    CompactionMetrics(
      fragmentsRemoved = old.size,
      fragmentsAdded = total,
      filesRemoved = old.map(f => f.getFilesCount + (if (f.hasDeletionFile) 1 else 0)).sum,
      filesAdded = total,
      indexedFragmentsSkipped = plan.indexedFragmentsSkipped)
  }
}
