package io.sparklance.table.maintenance

import org.slf4j.LoggerFactory

import io.sparklance.storage.{FileIO, FileTrees, Paths}
import io.sparklance.proto.TableProtos
import io.sparklance.table.{
  DatasetLayout,
  DeletionVector,
  FeatureFlags,
  FragmentRef,
  LanceDataset,
  ManifestFile,
  RowCounts,
  RowIdSequences,
  Snapshot,
  VersionSpec
}
import io.sparklance.table.index.IndexRemap
import io.sparklance.table.commit.DataFileNames
import io.sparklance.table.txn.{
  CommitOptions,
  Committer,
  ManifestBuilder,
  ReserveFragments,
  Rewrite,
  RewriteGroup
}

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
  def apply(
      io: FileIO,
      root0: String,
      options: CompactionOptions = CompactionOptions(),
      runner: Runner = null,
      commitOptions: CommitOptions = CommitOptions(),
      read: Option[Snapshot] = None
  ): CompactionMetrics = {
    val root = Paths.stripTrailingSlash(root0)
    val opts = options.validated()
    val s = read.getOrElse(LanceDataset.open(io, root).open(VersionSpec.Latest))
    val stable = (s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0
    ManifestBuilder.checkWritable(s, Rewrite(Nil))
    // The index section, read once for the plan, the remaps and the kept indices.
    val indices = ManifestFile.indices(io, s)
    val plan = CompactionPlanner.plan(io, s, opts, indices)
    if (plan.indexedFragmentsSkipped > 0)
      log.warn(s"Compaction of $root leaves ${plan.indexedFragmentsSkipped} fragment(s) " +
        "alone: indices cover them whose files this connector cannot remap (see IndexRemap)")
    if (plan.groups.isEmpty)
      return CompactionMetrics(0, 0, 0, 0, plan.indexedFragmentsSkipped)
    val token = DataFileNames.newToken()
    val tasks = plan.groups.map(CompactionTask.of(s, _, stable, opts, token))
    val results = Option(runner).getOrElse(inThisThread(io))(tasks)
    try {
      val metrics = commit(io, root, s, indices, plan, results, stable, commitOptions)
      log.info(
        "Compacted {}: {} fragment(s) into {} at read version {}",
        root,
        Long.box(metrics.fragmentsRemoved),
        Long.box(metrics.fragmentsAdded),
        Long.box(s.version)
      )
      metrics
    } catch {
      case e: Throwable =>
        val files = results.flatten.map(_.fragment.file.path)
        log.warn(
          "Compaction of {} did not commit; deleting its {} new data file(s)",
          Array[AnyRef](root, Int.box(files.size)): _*
        )
        files.foreach(DatasetLayout.deleteUncommitted(io, root, _, Nil))
        throw e
    }
  }

  private def commit(
      io: FileIO,
      root: String,
      s: Snapshot,
      indices: Seq[TableProtos.IndexMetadata],
      plan: CompactionPlan,
      results: Seq[Seq[CompactedFragment]],
      stable: Boolean,
      commitOptions: CommitOptions
  ): CompactionMetrics = {
    val total = results.map(_.size).sum
    val committer = new Committer(io, root, commitOptions)
    val reserved = committer.commit(Some(s), ReserveFragments(total))
    val onto = LanceDataset.open(io, root).open(VersionSpec.Number(reserved.version))
    var next = (onto.manifest.getMaxFragmentId & 0xffffffffL) - total + 1
    val groups = plan.groups.zip(results).map { case (g, frags) =>
      RewriteGroup(
        g.fragments,
        frags.map { cf =>
          val p = cf.fragment.toProto(next).toBuilder
          next += 1
          if (stable) {
            p.setInlineRowIds(RowIdSequences.encode(cf.rowIds).toByteString)
            if (cf.rowIds.nonEmpty)
              p.setInlineCreatedAtVersions(RowIdSequences.encodeVersions(cf.createdAt))
                .setInlineLastUpdatedAtVersions(RowIdSequences.encodeVersions(cf.updatedAt))
          }
          p.build()
        }
      )
    }
    val remapped = remapIndices(io, s, indices, groups, stable)
    // With stable row ids, the indices pylance keeps as they are get only a new bitmap.
    val kept = if (!stable) Map.empty[String, Boolean]
    else indices
      .flatMap(i => IndexRemap.keptWithStableRowIds(i).map(ManifestFile.uuidText(i.getUuid) -> _))
      .toMap
    try committer.commitOn(Some(s), Some(onto), Rewrite(groups, remapped, kept))
    catch {
      case e: Throwable =>
        remapped.foreach { case (_, n) =>
          FileTrees.deleteQuietly(
            io,
            DatasetLayout.indexDir(root, ManifestFile.uuidText(n.getUuid)),
            log
          )
        }
        throw e
    }
    val old = plan.groups.flatMap(_.fragments)
    CompactionMetrics(
      fragmentsRemoved = old.size,
      fragmentsAdded = total,
      filesRemoved = old.map(f => f.getFilesCount + (if (f.hasDeletionFile) 1 else 0)).sum,
      filesAdded = total,
      indexedFragmentsSkipped = plan.indexedFragmentsSkipped
    )
  }

  /**
   * The indices covering compacted fragments, remapped to the new fragments (pylance remaps
   * them inside its Rewrite, with or without stable row ids): old and new metadata.
   */
  private def remapIndices(
      io: FileIO,
      s: Snapshot,
      indices: Seq[TableProtos.IndexMetadata],
      groups: Seq[RewriteGroup],
      stable: Boolean
  ): Seq[(TableProtos.IndexMetadata, TableProtos.IndexMetadata)] = {
    val oldIds = groups.flatMap(_.oldIds).toSet
    // Each index's bitmap decoded once.
    val affected = indices.filterNot(_.getName.startsWith("__"))
      .filterNot(i =>
        if (stable) IndexRemap.keptWithStableRowIds(i).isDefined
        else IndexRemap.untouchedWithoutStableRowIds(i)
      )
      .map(i => i -> Rewrite.bitmap(i))
      .filter { case (_, covered) => oldIds.exists(id => covered.contains(id.toInt)) }
    if (affected.isEmpty) return Nil
    val moved = groups.flatMap(g => newAddresses(io, s, g)).toMap
    affected.map { case (i, covered) =>
      val added = Rewrite.joining(groups, covered)
      i -> IndexRemap(io, s, i, moved.filter { case (id, _) => covered.contains(id.toInt) }, added)
    }
  }

  /**
   * Where each row of a group's old fragments went: the live rows, in order, fill the new
   * fragments in order (as CompactionTask writes them); a deleted row maps to -1.
   */
  private def newAddresses(io: FileIO, s: Snapshot, g: RewriteGroup): Seq[(Long, Array[Long])] = {
    val news = g.newFragments.toIndexedSeq
    var n = 0
    var offset = 0L
    g.oldFragments.map { f =>
      val ref = FragmentRef(s.root, s, f)
      val deleted = DeletionVector.read(io, ref)
      val out = new Array[Long](RowCounts.physicalRows(io, ref).toInt)
      var o = 0
      while (o < out.length) {
        if (deleted.contains(o)) out(o) = -1L
        else {
          while (offset >= news(n).getPhysicalRows) { n += 1; offset = 0 }
          out(o) = (news(n).getId << 32) | offset
          offset += 1
        }
        o += 1
      }
      f.getId -> out
    }
  }
}
