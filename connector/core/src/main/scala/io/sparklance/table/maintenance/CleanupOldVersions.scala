package io.sparklance.table.maintenance

import scala.collection.mutable
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileEntry, FileIO, Paths}
import io.sparklance.table.{Branches, LanceDataset, ManifestFile, Snapshot, Tags,
  VersionSpec}

/**
 * Which versions `cleanup_old_versions` removes, as pylance 14 takes its arguments: versions
 * older than `olderThan` and not among the last `retainVersions` (two weeks when neither is
 * given); the latest and tagged versions are always kept.
 */
final case class CleanupPolicy(
    olderThan: Option[FiniteDuration] = None,
    retainVersions: Option[Int] = None,
    deleteUnverified: Boolean = false,
    errorIfTaggedOldVersions: Boolean = true) {
  retainVersions.foreach(n => require(n > 0, s"retain_versions must be positive, not $n"))
}

/** pylance's CleanupStats, plus the files removed (or, in a dry run, that would be). */
final case class CleanupStats(
    bytesRemoved: Long,
    oldVersions: Long,
    dataFilesRemoved: Long,
    transactionFilesRemoved: Long,
    indexFilesRemoved: Long,
    deletionFilesRemoved: Long,
    files: Seq[String])

/**
 * `cleanup_old_versions` as pylance 14 does it (`rust/lance/src/dataset/cleanup.rs`):
 *  1. Every manifest is read. The latest, tagged ones and those the policy keeps form the
 *     working set; the files they name (data files, deletion files, the transaction file,
 *     index directories) are kept. Files named only by removed versions are "verified".
 *  2. Files not modified after the oldest kept manifest (tags aside) are candidates: a data, deletion,
 *     transaction or index file no kept version names is removed when it is verified, or
 *     older than 7 days, or `deleteUnverified` — anything else may belong to a write in
 *     progress and stays. Manifests of removed versions go too.
 * Versions that branches were made from are kept like tagged ones (their files are the
 * branches' too). Other files (tags, branches, the version hint, files outside those
 * directories) are never touched. With `dryRun` nothing is deleted and the stats tell what
 * would be.
 */
object CleanupOldVersions {
  private val log = LoggerFactory.getLogger(getClass)
  private val UnverifiedThreshold = 7.days
  private val DefaultOlderThan = 14.days

  /** Files named by a set of versions; filled by several threads at once. */
  private final class Files {
    private def set() = java.util.concurrent.ConcurrentHashMap.newKeySet[String]().asScala
    val data: mutable.Set[String] = set()
    val deletions: mutable.Set[String] = set()
    val transactions: mutable.Set[String] = set()
    val indexUuids: mutable.Set[String] = set()
  }

  def apply(fileIO: FileIO, root0: String, policy: CleanupPolicy, dryRun: Boolean = false,
      nowMillis: Long = System.currentTimeMillis()): CleanupStats = {
    val root = Paths.stripTrailingSlash(root0)
    val dataset = LanceDataset.open(fileIO, root)
    val versions = dataset.versions()
    val latest = versions.last.version
    val beforeMillis = policy.olderThan.orElse(
      if (policy.retainVersions.isEmpty) Some(DefaultOlderThan) else None)
      .map(d => nowMillis - d.toMillis)
    val beforeVersion = policy.retainVersions.map { n =>
      if (versions.size <= n) versions.head.version else versions(versions.size - n).version
    }
    val tags = Tags.list(fileIO, root).filter(_.branch.isEmpty)
    val tagged = tags.map(_.version).toSet
    // Versions branches were made from stay, as pylance keeps them: the branches read their
    // files (never an error, unlike old tagged versions).
    val branched = Branches.referencedVersions(fileIO, root)

    val kept = new Files
    val verified = new Files
    val oldManifests = mutable.ArrayBuffer.empty[String]
    val taggedOld = mutable.ArrayBuffer.empty[Long]
    var earliestKeptMillis = Long.MaxValue
    // Every manifest is read (and what it names collected) by a few threads at once: long
    // histories are thousands of manifests, each a round trip on an object store.
    def isOld(version: Long, millis: Long) =
      beforeMillis.forall(millis < _) && beforeVersion.forall(version < _)
    def keeps(version: Long, millis: Long) = version >= latest || !isOld(version, millis) ||
      tagged(version) || branched(version)
    val read = inParallel(versions) { vf =>
      val s = dataset.open(VersionSpec.Number(vf.version))
      val millis = s.timestampMicros / 1000L
      record(fileIO, s, if (keeps(s.version, millis)) kept else verified)
      (s.version, millis, s.manifestPath)
    }
    read.foreach { case (version, millis, manifestPath) =>
      val old = isOld(version, millis)
      val isLatest = version >= latest
      if (tagged(version) && !isLatest && old) taggedOld += version
      if (!keeps(version, millis)) oldManifests += manifestPath
      // pylance 14 (observed) looks at files up to the oldest kept version that is kept for its
      // age or position, not for a tag: files of versions after an old tag are candidates.
      if (isLatest || !old) earliestKeptMillis = math.min(earliestKeptMillis, millis)
    }
    if (policy.errorIfTaggedOldVersions && taggedOld.nonEmpty) {
      val names = tags.filter(t => taggedOld.contains(t.version))
        .map(t => s""""${t.name}": ${t.version}""").mkString("{", ", ", "}")
      throw LanceErrors.unsupported(s"Cleanup error: ${taggedOld.size} tagged version(s) of " +
        s"$root have been marked for cleanup. Either set error_if_tagged_old_versions=false " +
        s"or delete the following tag(s) to enable cleanup: $names")
    }

    val unverifiedBefore = nowMillis - UnverifiedThreshold.toMillis
    val removed = mutable.ArrayBuffer.empty[(String, Long, Char)]
    walk(fileIO, root).filter(_.modificationTime <= earliestKeptMillis).foreach { e =>
      val rel = e.path.substring(e.path.indexOf(root) + root.length).stripPrefix("/")
      val maybeInProgress = !policy.deleteUnverified && e.modificationTime >= unverifiedBefore
      def decide(inKept: Boolean, inVerified: Boolean): Boolean =
        !inKept && (!maybeInProgress || inVerified)
      val parts = rel.split('/')
      val kind: Option[Char] =
        if (rel.startsWith("_versions/.tmp")) Some('m').filter(_ => !maybeInProgress)
        else if (parts.head == "_indices" && parts.length > 2) {
          val uuid = parts(1)
          Some('i').filter(_ => decide(kept.indexUuids(uuid), verified.indexUuids(uuid)))
        } else if (rel.endsWith(".lance") && parts.head == "data")
          Some('d').filter(_ => decide(kept.data(rel), verified.data(rel)))
        else if ((rel.endsWith(".arrow") || rel.endsWith(".bin")) && parts.head == "_deletions")
          Some('x').filter(_ => decide(kept.deletions(rel), verified.deletions(rel)))
        else if (rel.endsWith(".txn") && parts.head == "_transactions")
          Some('t').filter(_ => decide(kept.transactions(rel), verified.transactions(rel)))
        else None
      kind.foreach(k => removed += ((e.path, e.size, k)))
    }
    val sizes = inParallel(oldManifests.toSeq)(p => fileIO.size(p))
    val all = removed.toSeq ++ oldManifests.zip(sizes).map { case (p, size) => (p, size, 'v') }
    if (!dryRun) deleteAll(fileIO, root, all.map(_._1))
    // Reported in one form, under the root as given (a listing qualifies its paths: file:/...).
    def shown(path: String): String =
      if (path.startsWith(root)) path
      else Paths.join(root, path.substring(path.indexOf(root) + root.length).stripPrefix("/"))
    log.info("Cleanup of {}{}: {} old versions, {} files", root, if (dryRun) " (dry run)" else "",
      Long.box(oldManifests.size.toLong), Int.box(all.size))
    def count(k: Char) = removed.count(_._3 == k).toLong
    CleanupStats(all.map(_._2).sum, oldManifests.size.toLong, count('d'), count('t'),
      count('i'), count('x'), all.map(f => shown(f._1)))
  }

  /** Deletes `paths` with at most `DeleteThreads` deletes in flight (object stores are slow). */
  private def deleteAll(fileIO: FileIO, root: String, paths: Seq[String]): Unit =
    inParallel(paths, DeleteThreads) { p =>
      if (!fileIO.delete(p)) log.warn("Cleanup of {} could not delete {}", root, p: Any)
    }

  private val DeleteThreads = 16
  private val ReadThreads = 8

  /** `f` of every element, in order, on at most `threads` threads. */
  private def inParallel[A, B](xs: Seq[A], threads: Int = ReadThreads)(f: A => B): Seq[B] =
    if (xs.size <= 1) xs.map(f)
    else {
      val pool = java.util.concurrent.Executors.newFixedThreadPool(math.min(threads, xs.size))
      try {
        val futures = xs.map(x => pool.submit(new java.util.concurrent.Callable[B] {
          def call(): B = f(x)
        }))
        futures.map { fu =>
          try fu.get() catch {
            case e: java.util.concurrent.ExecutionException => throw e.getCause
          }
        }
      } finally pool.shutdownNow()
    }

  /** The files a version names, relative to the dataset root. */
  private def record(fileIO: FileIO, s: Snapshot, into: Files): Unit = {
    val m = s.manifest
    m.getFragmentsList.asScala.foreach { f =>
      f.getFilesList.asScala.filterNot(_.hasBaseId).foreach(df => into.data += s"data/${df.getPath}")
      if (f.hasDeletionFile && !f.getDeletionFile.hasBaseId) {
        val d = f.getDeletionFile
        val ext = if (d.getFileType == TableProtos.DeletionFile.DeletionFileType.BITMAP) "bin"
          else "arrow"
        into.deletions +=
          s"_deletions/${f.getId}-${d.getReadVersion}-${java.lang.Long.toUnsignedString(d.getId)}.$ext"
      }
    }
    if (!m.getTransactionFile.isEmpty) into.transactions += s"_transactions/${m.getTransactionFile}"
    ManifestFile.indices(fileIO, s).foreach(i =>
      into.indexUuids += ManifestFile.uuidText(i.getUuid))
  }

  private def walk(fileIO: FileIO, dir: String): Seq[FileEntry] =
    if (!fileIO.isDirectory(dir)) Nil
    else fileIO.list(dir).flatMap(e => if (e.isDirectory) walk(fileIO, e.path) else Seq(e))
}
