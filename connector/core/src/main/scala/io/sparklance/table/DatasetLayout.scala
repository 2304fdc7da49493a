package io.sparklance.table

import java.net.URLDecoder
import java.nio.charset.StandardCharsets
import java.util.Locale

import io.sparklance.storage.{BestEffort, FileIO, Paths}

/**
 * The layout of a Lance dataset under its root, as pylance 14 writes it (`docs/src/format/
 * table`): the directory of each kind of file, whether a dataset is there, the deletion of
 * the files a write left without committing them, and the URI forms a root may take. Every
 * entry point (reads, writes, maintenance, catalogs, namespaces) asks here.
 */
object DatasetLayout {
  val Data = "data"
  val Versions = "_versions"
  val Indices = "_indices"
  val Deletions = "_deletions"
  val Transactions = "_transactions"
  val Blobs = "_blobs"
  val Refs = "_refs"
  val Tree = "tree"

  /** The data files: `data/<name>.lance`, each with its blob sidecars in `data/<name>/`. */
  def dataDir(root: String): String = Paths.join(root, Data)
  def dataFile(root: String, name: String): String = Paths.join(dataDir(root), name)

  /** The manifests, one per version. */
  def versionsDir(root: String): String = Paths.join(root, Versions)

  /** The files of the index `uuid` (its canonical text form). */
  def indexDir(root: String, uuid: String): String = Paths.join(Paths.join(root, Indices), uuid)

  def deletionsDir(root: String): String = Paths.join(root, Deletions)
  def transactionsDir(root: String): String = Paths.join(root, Transactions)

  /** Managed blob objects (blob v2, `_blobs/<name>.blob`). */
  def blobsDir(root: String): String = Paths.join(root, Blobs)

  def tagsDir(root: String): String = Paths.join(Paths.join(root, Refs), "tags")
  def branchesDir(root: String): String = Paths.join(Paths.join(root, Refs), "branches")

  /** The dataset root of branch `name`. */
  def branchRoot(root: String, name: String): String =
    Paths.join(Paths.join(Paths.stripTrailingSlash(root), Tree), name)

  /** A Lance dataset is at `root`: `_versions/` holds at least one manifest (one listing). */
  def hasDataset(io: FileIO, root: String): Boolean =
    io.list(versionsDir(Paths.stripTrailingSlash(root)))
      .exists(e => !e.isDirectory && ManifestNaming.parse(e.name).isDefined)

  /**
   * Deletes what a write left at `root` without committing it: its data file `name` (under
   * `data/`), that file's blob sidecars, and the managed blob objects `blobObjects` (paths
   * relative to the root). A failure is logged, never thrown ([[BestEffort]]): a file left
   * behind is an orphan that `cleanup_old_versions` removes later.
   */
  def deleteUncommitted(io: FileIO, root: String, name: String, blobObjects: Seq[String]): Unit = {
    val path = dataFile(root, name)
    BestEffort.delete(io, path)
    deleteSidecars(io, path)
    blobObjects.foreach(o => BestEffort.delete(io, Paths.join(root, o)))
  }

  /** Deletes the blob sidecar directory of data file `dataFilePath` (`data/<name>/`), if any. */
  def deleteSidecars(io: FileIO, dataFilePath: String): Unit = {
    val dir = dataFilePath.stripSuffix(".lance")
    BestEffort.run(s"delete the blob sidecars in $dir")(if (io.isDirectory(dir)) {
      io.list(dir).foreach(e => BestEffort.delete(io, e.path))
      io.delete(dir)
    })
  }

  /** pylance's DynamoDB-committed S3 scheme: `s3+ddb://bucket/path?ddbTableName=t`. */
  val S3DdbScheme = "s3+ddb"

  /**
   * A root and the settings its URI query carries: `s3+ddb://bucket/path?ddbTableName=t` is
   * `s3+ddb://bucket/path` with `ddbTableName -> t`, as pylance reads it. Any other path is
   * its own root, with no settings.
   */
  def splitQuery(path: String): (String, Map[String, String]) = {
    val scheme = S3DdbScheme + "://"
    if (path == null || !path.toLowerCase(Locale.ROOT).startsWith(scheme) || !path.contains("?"))
      return (path, Map.empty)
    val (bare, query) = path.splitAt(path.indexOf('?'))
    def decode(s: String) = URLDecoder.decode(s, StandardCharsets.UTF_8)
    val settings = query.drop(1).split('&').filter(_.nonEmpty).map { kv =>
      val i = kv.indexOf('=')
      if (i < 0) decode(kv) -> "" else decode(kv.substring(0, i)) -> decode(kv.substring(i + 1))
    }.toMap
    (bare, settings)
  }
}
