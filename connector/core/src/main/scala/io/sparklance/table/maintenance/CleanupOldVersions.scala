package io.sparklance.table.maintenance

import scala.collection.mutable
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, LanceField, ListArray, NullArray, StructArray}
import io.sparklance.format.blob.{BlobColumn, BlobDescriptors, BlobKind}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileEntry, FileIO, Paths}
import io.sparklance.table.{
  Branches,
  DataFileRef,
  DatasetLayout,
  DeletionVector,
  FragmentRef,
  LanceDataset,
  ManifestFile,
  Snapshot,
  Tags,
  VersionSpec
}
import io.sparklance.table.txn.WritePlan

/**
 * `cleanup_old_versions` as pylance 14 does it (`rust/lance/src/dataset/cleanup.rs`):
 *  1. Every manifest is read. The latest, tagged ones and those the policy keeps form the
 *     working set; the files they name (data files, deletion files, the transaction file,
 *     index directories) are kept. Files named only by removed versions are "verified".
 *  2. Files not modified after the oldest kept manifest (tags aside) are candidates: a data, deletion,
 *     transaction or index file no kept version names is removed when it is verified, or
 *     older than 7 days, or `deleteUnverified` — anything else may belong to a write in
 *     progress and stays. Manifests of removed versions go too. A blob sidecar
 *     (`data/<file>/…`) goes with its data file; a managed blob object (`_blobs/…`) is a
 *     version's when a row that version has not deleted references it. Both count as data
 *     files, as pylance counts them.
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

    /** Data files (under `data/`) of managed-blob versions, with their schema's blob fields. */
    val managed = new java.util.concurrent.ConcurrentHashMap[String, ManagedFile]()
  }

  /**
   * A data file whose blob columns may reference managed objects under `_blobs/`, with its
   * fragment as one version has it (rows that version deleted reference nothing).
   */
  private final case class ManagedFile(
      file: DataFileRef,
      fragment: FragmentRef,
      fields: Seq[LanceField]
  )

  def apply(
      fileIO: FileIO,
      root0: String,
      policy: CleanupPolicy,
      dryRun: Boolean = false,
      nowMillis: Long = System.currentTimeMillis()
  ): CleanupStats = {
    val root = Paths.stripTrailingSlash(root0)
    val dataset = LanceDataset.open(fileIO, root)
    val versions = dataset.versions()
    val latest = versions.last.version
    val beforeMillis = policy.olderThan.orElse(
      if (policy.retainVersions.isEmpty) Some(DefaultOlderThan) else None
    )
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

    // Managed blob objects (`_blobs/`) are a version's when one of its data files' descriptors
    // names them: read from the kept versions' files, and from the files only removed
    // versions name (verified). A file that cannot be read fails the cleanup before anything
    // is deleted.
    val managed = !kept.managed.isEmpty || !verified.managed.isEmpty
    val keptObjects = if (!managed) Set.empty[String]
    else managedObjects(fileIO, kept.managed.values.asScala.toSeq)
    val verifiedObjects = if (!managed) Set.empty[String]
    else managedObjects(
      fileIO,
      verified.managed.asScala.collect {
        case (key, f) if !kept.managed.containsKey(key) => f
      }.toSeq
    )

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
        else if (parts.head == DatasetLayout.Indices && parts.length > 2) {
          val uuid = parts(1)
          Some('i').filter(_ => decide(kept.indexUuids(uuid), verified.indexUuids(uuid)))
        } else if (rel.endsWith(".lance") && parts.head == DatasetLayout.Data)
          Some('d').filter(_ => decide(kept.data(rel), verified.data(rel)))
        // A blob sidecar goes with its data file (`data/<name>/…` beside `data/<name>.lance`),
        // counted as a data file, as pylance counts it.
        else if (rel.endsWith(".blob") && parts.head == DatasetLayout.Data && parts.length == 3) {
          val owner = s"data/${parts(1)}.lance"
          Some('d').filter(_ => decide(kept.data(owner), verified.data(owner)))
        } else if (
          managed && rel.endsWith(".blob") && parts.head == DatasetLayout.Blobs &&
          parts.length == 2
        )
          Some('d').filter(_ => decide(keptObjects(rel), verifiedObjects(rel)))
        else if (
          (rel.endsWith(".arrow") || rel.endsWith(".bin")) && parts.head == DatasetLayout.Deletions
        )
          Some('x').filter(_ => decide(kept.deletions(rel), verified.deletions(rel)))
        else if (rel.endsWith(".txn") && parts.head == DatasetLayout.Transactions)
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
    log.info(
      "Cleanup of {}{}: {} old versions, {} files",
      root,
      if (dryRun) " (dry run)" else "",
      Long.box(oldManifests.size.toLong),
      Int.box(all.size)
    )
    def count(k: Char) = removed.count(_._3 == k).toLong
    CleanupStats(
      all.map(_._2).sum,
      oldManifests.size.toLong,
      count('d'),
      count('t'),
      count('i'),
      count('x'),
      all.map(f => shown(f._1))
    )
  }

  /** Deletes `paths` with at most `DeleteThreads` deletes in flight (object stores are slow). */
  private def deleteAll(fileIO: FileIO, root: String, paths: Seq[String]): Unit =
    inParallel(paths, DeleteThreads) { p =>
      if (!fileIO.delete(p)) log.warn("Cleanup of {} could not delete {}", root, p: Any)
    }

  private val DeleteThreads = 16
  private val ReadThreads = 8

  /** `f` of every element, in order, on at most `threads` threads. */
  private def inParallel[A, B](xs0: Seq[A], threads: Int = ReadThreads)(f: A => B): Seq[B] = {
    // Strict: a lazy Seq (Scala 2.12's Iterable.toSeq is a Stream) would submit its tasks
    // after the pool is shut down.
    val xs = xs0.toVector
    if (xs.size <= 1) xs.map(f)
    else {
      val pool = java.util.concurrent.Executors.newFixedThreadPool(math.min(threads, xs.size))
      try {
        val futures = xs.map(x =>
          pool.submit(new java.util.concurrent.Callable[B] {
            def call(): B = f(x)
          })
        )
        futures.map { fu =>
          try fu.get()
          catch {
            case e: java.util.concurrent.ExecutionException => throw e.getCause
          }
        }
      } finally pool.shutdownNow()
    }
  }

  /** The files a version names, relative to the dataset root. */
  private def record(fileIO: FileIO, s: Snapshot, into: Files): Unit = {
    val m = s.manifest
    m.getFragmentsList.asScala.foreach { f =>
      f.getFilesList.asScala.filterNot(_.hasBaseId).foreach(df =>
        into.data += s"data/${df.getPath}"
      )
      if (f.hasDeletionFile && !f.getDeletionFile.hasBaseId) {
        val d = f.getDeletionFile
        val ext = if (d.getFileType == TableProtos.DeletionFile.DeletionFileType.BITMAP) "bin"
        else "arrow"
        into.deletions +=
          s"_deletions/${f.getId}-${d.getReadVersion}-${java.lang.Long.toUnsignedString(d.getId)}.$ext"
      }
    }
    if (WritePlan.managedBlobs(s.schema.metadata)) {
      val blobFields = s.schema.fields.filter(BlobColumn.containsBlob)
      s.fragments.map(FragmentRef(s.root, s, _)).foreach { fr =>
        fr.files.filter(_.baseId.isEmpty).foreach { df =>
          val rel = "data/" + df.path.substring(df.path.lastIndexOf('/') + 1)
          val held = blobFields.filter(f => f.preOrder.exists(g => df.holds(g.id)))
          // One entry per data file and deletion state (versions share most of them).
          if (held.nonEmpty)
            into.managed.putIfAbsent(
              rel + "#" + fr.deletionPath.getOrElse(""),
              ManagedFile(df, fr, held)
            )
        }
      }
    }
    if (!m.getTransactionFile.isEmpty) into.transactions += s"_transactions/${m.getTransactionFile}"
    ManifestFile.indices(fileIO, s).foreach(i =>
      into.indexUuids += ManifestFile.uuidText(i.getUuid)
    )
  }

  /**
   * The `_blobs/` objects (dataset-relative) that the blob descriptors of `files` name in rows
   * their version has not deleted (pylance's rule): Managed and ManagedWithBase values.
   */
  private def managedObjects(fileIO: FileIO, files: Seq[ManagedFile]): Set[String] =
    inParallel(files) { mf =>
      val out = mutable.Set.empty[String]
      val deleted = DeletionVector.read(fileIO, mf.fragment)
      val reader = mf.file.open(fileIO)
      try {
        val scan = reader.scan(mf.fields, 0L, reader.numRows)
        try {
          var row = 0L
          while (row < reader.numRows) {
            val n = math.min(reader.numRows - row, 8192L).toInt
            val first = row
            val live = (i: Int) => !deleted.contains((first + i).toInt)
            scan.next(n).zip(mf.fields).foreach { case (a, f) =>
              collect(f, a, live, mf.file.path, out)
            }
            row += n
          }
        } finally scan.close()
      } finally reader.close()
      out.toSet
    }.flatten.toSet

  /**
   * Adds to `out` the managed objects named in `a`, the values of field `f`, in the rows
   * `live` keeps (items of a list kept with their row).
   */
  private def collect(
      f: LanceField,
      a: ColumnArray,
      live: Int => Boolean,
      file: String,
      out: mutable.Set[String]
  ): Unit = BlobColumn.version(f) match {
    case Some(BlobColumn.V2) => a match {
        case _: NullArray =>
        case _ =>
          val d = BlobDescriptors.of(a, BlobColumn.V2, s"$file (blob column '${f.name}')")
          var i = 0
          while (i < d.length) {
            if (
              live(i) && !d.isNull(i) && (d.kinds(i) == BlobKind.Managed ||
                d.kinds(i) == BlobKind.ManagedWithBase)
            ) out += d.uri(i)
            i += 1
          }
      }
    case Some(_) =>
    case None => a match {
        case st: StructArray =>
          f.children.zip(st.children).foreach { case (c, ca) => collect(c, ca, live, file, out) }
        case l: ListArray => f.children.headOption.foreach { item =>
            // An item is live when its row is.
            val rowOf = new Array[Int](math.max(0, l.offsets(l.length)))
            var r = 0
            while (r < l.length) {
              var k = l.offsets(r); while (k < l.offsets(r + 1)) { rowOf(k) = r; k += 1 }
              r += 1
            }
            collect(item, l.child, (k: Int) => live(rowOf(k)), file, out)
          }
        case _ =>
      }
  }

  private def walk(fileIO: FileIO, dir: String): Seq[FileEntry] =
    if (!fileIO.isDirectory(dir)) Nil
    else fileIO.list(dir).flatMap(e => if (e.isDirectory) walk(fileIO, e.path) else Seq(e))
}
