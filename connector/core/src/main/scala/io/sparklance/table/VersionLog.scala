package io.sparklance.table

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, ObjectStores, Paths}

/**
 * The versions of a dataset, found by listing `_versions/`. The listing is the only source
 * of truth: `_latest.manifest` (obsolete) and `latest_version_hint.json` (a hint that may be
 * stale) are never trusted.
 */
final class VersionLog(io: FileIO, val root: String) {
  val versionsDir: String = DatasetLayout.versionsDir(root)

  /** All versions, oldest first. */
  def list(): IndexedSeq[VersionFile] = {
    val found = io.list(versionsDir).filterNot(_.isDirectory).flatMap { e =>
      ManifestNaming.parse(e.name).map { case (v, naming) => VersionFile(v, naming, e.path) }
    }
    found.sortBy(_.version).toIndexedSeq
  }

  /** The naming scheme in use; V2 for a dataset with no versions yet (Lance's default). */
  def naming(files: Seq[VersionFile]): ManifestNaming = {
    val schemes = files.map(_.naming).distinct
    if (schemes.size > 1)
      throw LanceErrors.corruptFile(
        versionsDir,
        "manifests use both V1 and V2 naming in one dataset"
      )
    schemes.headOption.getOrElse(ManifestNaming.V2)
  }

  def latest(): Option[VersionFile] = list().lastOption

  /**
   * Version `version`'s manifest: looked up at the path each naming scheme gives it (one
   * existence check each, not a listing: opening every version of a long history stays
   * linear), listing the directory only to name the versions there are when it is missing.
   */
  def find(version: Long): VersionFile = {
    val direct = Seq(ManifestNaming.V2, ManifestNaming.V1).iterator.map { n =>
      VersionFile(version, n, manifestPath(version, n))
    }.find(vf => io.exists(vf.path))
    direct.getOrElse {
      val all = list()
      all.find(_.version == version).getOrElse(
        throw LanceErrors.versionNotFound(root, version, all.map(_.version))
      )
    }
  }

  def manifestPath(version: Long, naming: ManifestNaming): String =
    Paths.join(versionsDir, naming.fileName(version))

  /**
   * `_versions/latest_version_hint.json` as pylance 14 writes it after a commit: a hint for
   * readers, never trusted here (a failure to write it fails nothing but this call). Not on
   * object stores, where pylance writes none.
   */
  def writeHint(version: Long): Unit =
    if (!ObjectStores.isObjectStore(root))
      io.write(
        Paths.join(versionsDir, "latest_version_hint.json"),
        s"""{"version":$version}""".getBytes("UTF-8")
      )
}
