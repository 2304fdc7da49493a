package io.sparklance.table.txn

import java.util.UUID

import scala.jdk.CollectionConverters._

import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.{
  DatasetLayout,
  LanceDataset,
  ManifestFile,
  Snapshot,
  VersionLog,
  VersionSpec
}
import io.sparklance.table.commit.CommitPauses

/**
 * Commits one operation the way Lance does:
 *  1. Build the next manifest from the base version (the operation applies itself; a Delete
 *     writes its deletion files here).
 *  2. Write the transaction to `_transactions/{read_version}-{uuid}.txn` and embed it in the
 *     manifest's transaction section, as pylance 14 does.
 *  3. Put the manifest at the next version's path through the commit handler.
 *  4. If another writer took that version, read the transactions committed since the read
 *     version; the resolver rebases or fails; on rebase wait (exponential backoff with full
 *     jitter, bounded by count and time) and build again on the newest version.
 * The recorded read version stays the one the operation read, as pylance keeps it.
 * Nothing here deletes data files; the caller removes its files when the commit fails.
 */
final class Committer(fileIO: FileIO, root0: String, options: CommitOptions = CommitOptions()) {
  private val log = LoggerFactory.getLogger(classOf[Committer])
  private val root = Paths.stripTrailingSlash(root0)
  private val versions = new VersionLog(fileIO, root)
  private val handler = CommitHandler.forRoot(fileIO, root)
  private val resolver = new ConflictResolver(root)
  private val txnLog = new TransactionLog(fileIO, root)
  private val random = new java.util.Random()

  /** Commits `op`, read at `read` (None when creating the dataset). */
  def commit(read: Option[Snapshot], op: Operation): CommitResult = commitOn(read, read, op)

  /**
   * Commits `op` read at `read` on top of `onto`, a newer version the caller already knows
   * of (a compaction's Rewrite after its ReserveFragments): what was committed in between is
   * checked first, as on a retry.
   */
  def commitOn(read: Option[Snapshot], onto: Option[Snapshot], op: Operation): CommitResult = {
    val readVersion = read.map(_.version).getOrElse(0L)
    val started = System.nanoTime()
    var base = onto
    for (r <- read; o <- onto if o.version > r.version)
      resolver.check(op, readVersion, txnLog.between(r.version, o.version))
    var attempt = 1
    while (true) {
      base.foreach(ManifestBuilder.checkWritable(_, op))
      val uuid = UUID.randomUUID().toString
      val txnName = TransactionLog.fileName(readVersion, uuid)
      val mb = new ManifestBuilder(fileIO, root, readVersion, base, options)
      val recorded = op.applyTo(mb)
      val txn = Transaction.newBuilder().setReadVersion(readVersion).setUuid(uuid)
        .putAllTransactionProperties(options.transactionProperties.asJava)
      recorded.writeTo(txn)
      val txnBytes = txn.build().toByteArray
      CommitPauses.at("before-transaction")
      fileIO.createIfAbsent(Paths.join(DatasetLayout.transactionsDir(root), txnName), txnBytes)
      val manifest = mb.finish(txnName, recorded)
      val bytes = ManifestFile.encode(manifest, mb.indexSection(recorded), Some(txnBytes))
      val naming = base.map(_.naming).getOrElse(io.sparklance.table.ManifestNaming.V2)
      val path = versions.manifestPath(mb.version, naming)
      CommitPauses.at("before-manifest")
      if (handler.commit(path, bytes)) {
        CommitPauses.at("after-manifest")
        writeHint(mb.version)
        log.info(
          "Committed {} as version {} of {} (read version {}, attempt {})",
          op.name,
          Long.box(mb.version),
          root,
          Long.box(readVersion),
          Int.box(attempt)
        )
        return CommitResult(mb.version, path, attempt)
      }
      // Another writer committed this version: check everything committed since our base.
      val latest = LanceDataset.open(fileIO, root)
      val newest = latest.open(VersionSpec.Latest)
      resolver.check(op, readVersion, txnLog.between(mb.version - 1, newest.version))
      val elapsedMs = (System.nanoTime() - started) / 1000000L
      if (attempt > options.maxRetries || elapsedMs >= options.maxRetryTime.toMillis)
        throw LanceErrors.concurrentModification(
          root,
          readVersion,
          s"gave up after $attempt attempts in $elapsedMs ms: other writers kept committing " +
            "new versions"
        )
      val wait = backoff(attempt)
      log.info(
        "Version {} of {} was taken; retrying {} on version {} in {} ms (attempt {} of {})",
        Long.box(mb.version),
        root,
        op.name,
        Long.box(newest.version),
        Long.box(wait),
        Int.box(attempt + 1),
        Int.box(options.maxRetries + 1)
      )
      if (wait > 0) Thread.sleep(wait)
      base = Some(newest)
      attempt += 1
    }
    throw new IllegalStateException("unreachable")
  }

  /**
   * Builds an operation from the version `read` and commits it; when that ends in a
   * retryable conflict (another writer changed rows this operation reads), builds it again
   * from the newest version and commits that, as pylance's `delete`, `update` and
   * `merge_insert` re-run themselves (`execute_with_retry`), within the same time bound as
   * the commit retries. Incompatible conflicts are not retried.
   */
  def execute(read: Snapshot)(build: Snapshot => Operation): CommitResult =
    executeFrom(Some(read))(s => build(s.get))

  /** As [[execute]], from no dataset yet (`read` None: the operation creates it). */
  def executeFrom(read: Option[Snapshot])(build: Option[Snapshot] => Operation): CommitResult = {
    val started = System.nanoTime()
    var snapshot = read
    var runs = 1
    while (true) {
      try return commit(snapshot, build(snapshot))
      catch {
        case e: io.sparklance.LanceConcurrentModificationException if e.retryable =>
          val elapsedMs = (System.nanoTime() - started) / 1000000L
          if (runs > options.maxRetries || elapsedMs >= options.maxRetryTime.toMillis) throw e
          val newest = LanceDataset.open(fileIO, root).open(VersionSpec.Latest)
          log.info(
            "Re-running an operation read at version {} of {} on version {} after a " +
              "retryable conflict (run {}): {}",
            Long.box(snapshot.map(_.version).getOrElse(0L)),
            root,
            Long.box(newest.version),
            Int.box(runs + 1),
            e.getMessage
          )
          snapshot = Some(newest)
          runs += 1
      }
    }
    throw new IllegalStateException("unreachable")
  }

  /** Full jitter: uniform in [0, min(max, initial * 2^(attempt-1))]. */
  private def backoff(attempt: Int): Long = {
    val cap = math.min(
      options.maxBackoff.toMillis,
      options.initialBackoff.toMillis * (1L << math.min(attempt - 1, 20))
    )
    if (cap <= 0) 0L else (random.nextDouble() * cap).toLong
  }

  /** `_versions/latest_version_hint.json`, as pylance 14 writes it: a hint only. */
  private def writeHint(version: Long): Unit =
    try versions.writeHint(version)
    catch { case e: Exception => log.debug(s"Could not update the version hint of $root", e) }
}
