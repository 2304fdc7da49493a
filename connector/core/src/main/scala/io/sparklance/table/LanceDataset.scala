package io.sparklance.table

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths}

/** What a reader asks for: the latest version, a version number, a tag, or a point in time. */
sealed trait VersionSpec
object VersionSpec {
  case object Latest extends VersionSpec
  final case class Number(version: Long) extends VersionSpec
  final case class TagName(name: String) extends VersionSpec

  /** The newest version committed at or before this instant (microseconds since the epoch). */
  final case class AsOf(micros: Long) extends VersionSpec
}

/** One row of a dataset's history. */
final case class VersionInfo(version: Long, timestampMicros: Long, manifestPath: String)

/**
 * Entry point of the table layer: a dataset directory and how to open its versions.
 * Opening checks the path is a Lance dataset and that this reader understands the version's
 * feature flags.
 */
final class LanceDataset private (val io: FileIO, val root: String) {
  val versionLog = new VersionLog(io, root)

  def versions(): IndexedSeq[VersionFile] = versionLog.list()

  def latestVersion(): Long =
    versionLog.latest().map(_.version).getOrElse(throw LanceErrors.notADataset(
      root,
      "no manifests under _versions/"
    ))

  def tags(): Seq[Tag] = Tags.list(io, root)

  def open(spec: VersionSpec): Snapshot = spec match {
    case VersionSpec.Latest =>
      load(versionLog.latest().getOrElse(throw LanceErrors.notADataset(
        root,
        "no manifests under _versions/"
      )))
    case VersionSpec.Number(v) => load(versionLog.find(v))
    case VersionSpec.TagName(name) =>
      val tag = Tags.get(io, root, name)
      // A tag of a branch names a version of the branch's own dataset (tree/{branch}).
      tag.branch.filter(_.nonEmpty) match {
        case Some(b) => LanceDataset.open(io, Branches.path(root, b))
            .open(VersionSpec.Number(tag.version))
        case None => load(versionLog.find(tag.version))
      }
    case VersionSpec.AsOf(micros) =>
      val all = versionLog.list()
      if (all.isEmpty) throw LanceErrors.notADataset(root, "no manifests under _versions/")
      // Commit times grow with the version, so walk back from the newest.
      val it = all.reverseIterator.map(load)
      var oldest: Snapshot = null
      while (it.hasNext) {
        val s = it.next()
        if (s.timestampMicros <= micros) return s
        oldest = s
      }
      throw LanceErrors.noVersionAsOf(
        root,
        formatMicros(micros),
        formatMicros(oldest.timestampMicros)
      )
  }

  /** Every version with its commit time, oldest first. Reads each manifest. */
  def history(): Seq[VersionInfo] =
    versionLog.list().map { vf =>
      val s = load(vf); VersionInfo(s.version, s.timestampMicros, vf.path)
    }

  private def load(vf: VersionFile): Snapshot = {
    val decoded = ManifestFile.read(io, vf.path)
    val m = decoded.manifest
    if (m.getVersion != vf.version)
      throw LanceErrors.corruptFile(
        vf.path,
        s"file name says version ${vf.version} but the manifest says ${m.getVersion}"
      )
    FeatureFlags.checkReadable(m.getReaderFeatureFlags, root, vf.version)
    new Snapshot(root, vf.version, vf.path, vf.naming, m, decoded.indexSection)
  }

  private def formatMicros(micros: Long): String =
    java.time.Instant.ofEpochSecond(
      Math.floorDiv(micros, 1000000L),
      Math.floorMod(micros, 1000000L) * 1000L
    ).toString
}

object LanceDataset {

  /** Opens the dataset at `path`, failing clearly when there is nothing, or no Lance dataset, there. */
  def open(io: FileIO, path: String): LanceDataset = {
    val root = Paths.stripTrailingSlash(path)
    // One check on the usual path (one request on an object store); the rest only to say
    // precisely what is wrong.
    if (io.isDirectory(DatasetLayout.versionsDir(root))) return new LanceDataset(io, root)
    if (!io.exists(root)) throw LanceErrors.pathNotFound(root)
    if (!io.isDirectory(root)) throw LanceErrors.notADataset(root, "it is a file, not a directory")
    if (!io.isDirectory(DatasetLayout.versionsDir(root)))
      throw LanceErrors.notADataset(root, "it has no _versions/ directory")
    new LanceDataset(io, root)
  }

  /**
   * The latest version of the dataset at `path`, or None when no manifest is there (no
   * dataset, or not yet one): one listing and one manifest read, the least an object store
   * can do (a write's and a read's planning).
   */
  def latestIfAny(io: FileIO, path: String): Option[Snapshot] = {
    val ds = new LanceDataset(io, Paths.stripTrailingSlash(path))
    ds.versionLog.latest().map(ds.load)
  }
}
