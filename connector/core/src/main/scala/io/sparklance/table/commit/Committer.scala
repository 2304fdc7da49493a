package io.sparklance.table.commit

import java.util.UUID

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.{LanceErrors, LanceException}
import io.sparklance.format.LanceField
import io.sparklance.format.writer.{FileVersion, SchemaProtos}
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.proto.{RowIdProtos, TableProtos, TransactionProtos}
import io.sparklance.table._

/** What a write asks to commit. */
sealed trait WriteOperation {
  def fragments: Seq[NewFragment]
}

object WriteOperation {
  /** Add fragments to the current version (Lance `Append`). */
  final case class Append(fragments: Seq[NewFragment]) extends WriteOperation

  /**
   * Replace the whole dataset (Lance `Overwrite`): a new version with only these fragments
   * and this schema. On a path with no dataset it creates one; `mustCreate` makes it fail
   * if a dataset appeared meanwhile (Spark's error-if-exists and ignore modes).
   */
  final case class Overwrite(
      fragments: Seq[NewFragment],
      fields: Seq[LanceField],
      schemaMetadata: Map[String, Array[Byte]],
      dataVersion: Option[FileVersion],
      mustCreate: Boolean) extends WriteOperation
}

final case class CommitOptions(
    maxRetries: Int = 20,
    /** For new datasets only: assign stable row ids (flag 2), as pylance's `enable_stable_row_ids`. */
    enableStableRowIds: Boolean = false,
    writerLibrary: String = "spark-lance",
    writerVersion: String = CommitOptions.ConnectorVersion)

object CommitOptions {
  val ConnectorVersion: String = io.sparklance.ConnectorVersion.value
}

final case class CommitResult(version: Long, manifestPath: String, attempts: Int)

/**
 * The driver side of a write: turns fragments written by executors into the next version of
 * the dataset, the way Lance commits.
 *
 *  1. Write the transaction (`_transactions/{read_version}-{uuid}.txn`, a bare Transaction).
 *  2. Build the next manifest from the version the write started from: fragment ids from
 *     `max_fragment_id + 1` (from 0 on overwrite), stable row ids when the dataset has them,
 *     the index section carried over verbatim on append, unknown manifest fields kept,
 *     feature flags recomputed, writer version and timestamp set.
 *  3. Put it at `_versions/` under the dataset's naming scheme with create-if-absent, so
 *     exactly one of several racing writers gets each version.
 *  4. If the version was taken, read the transactions committed since and apply Lance's
 *     conflict rules: an append retries on the new version unless an overwrite or restore
 *     happened (then it fails with a concurrent-modification error); an overwrite retries.
 *
 * Nothing here deletes data files; the caller removes its files when the commit fails.
 */
object Committer {
  /** Writer flags this connector keeps correct when it commits. */
  val WriterSupported: Long = FeatureFlags.DeletionFiles | FeatureFlags.StableRowIds | FeatureFlags.UseV2Format |
    FeatureFlags.TableConfig | FeatureFlags.BasePaths | FeatureFlags.CoveredIndexMetadata |
    FeatureFlags.MixedDataFileVersions | FeatureFlags.FragmentReuseIndexTransitions
  /** Field ids are never reused (pylance 14); an append allocates none, so it keeps the rule. */
  val NonReusableFieldIds: Long = 1L << 15

  /** Fails unless this connector can write a new version on top of `s`. */
  def checkWritable(s: Snapshot, op: WriteOperation): Unit = {
    FeatureFlags.checkReadable(s.readerFeatureFlags, s.root, s.version)
    val allowed = WriterSupported | (op match { case _: WriteOperation.Append => NonReusableFieldIds; case _ => 0L })
    val bad = FeatureFlags.unsupported(s.writerFeatureFlags, allowed)
    if (bad.nonEmpty) throw LanceErrors.unsupportedFeatureFlags(s.root, s.version, "writer", bad)
  }

  def commit(io: FileIO, root0: String, base: Option[Snapshot], op: WriteOperation, opts: CommitOptions): CommitResult = {
    val root = Paths.stripTrailingSlash(root0)
    val log = new VersionLog(io, root)
    var current = base
    var attempt = 1
    while (true) {
      current.foreach(checkWritable(_, op))
      val readVersion = current.map(_.version).getOrElse(0L)
      val uuid = UUID.randomUUID().toString
      val txnName = s"$readVersion-$uuid.txn"
      CommitPauses.at("before-transaction")
      io.createIfAbsent(Paths.join(Paths.join(root, "_transactions"), txnName), transaction(readVersion, uuid, op).toByteArray)
      val naming = current.map(_.naming).getOrElse(ManifestNaming.V2)
      val (manifest, indexSection) = buildManifest(io, current, op, txnName, opts)
      val path = log.manifestPath(readVersion + 1, naming)
      CommitPauses.at("before-manifest")
      if (io.createIfAbsent(path, ManifestFile.encode(manifest, indexSection))) {
        CommitPauses.at("after-manifest")
        writeHint(io, log, readVersion + 1)
        return CommitResult(readVersion + 1, path, attempt)
      }
      // Someone else committed readVersion + 1: decide from what they did.
      val latest = LanceDataset.open(io, root)
      val newer = latest.open(VersionSpec.Latest)
      (readVersion + 1 to newer.version).foreach { v =>
        val s = if (v == newer.version) newer else latest.open(VersionSpec.Number(v))
        checkConflict(io, root, s, op, readVersion)
      }
      if (attempt >= opts.maxRetries)
        throw LanceErrors.concurrentModification(root, readVersion,
          s"gave up after $attempt attempts: other writers kept committing new versions")
      current = Some(newer)
      attempt += 1
    }
    throw new IllegalStateException("unreachable")
  }

  /** Fails when the transaction that made version `s` conflicts with `op` (started at `readVersion`). */
  private def checkConflict(io: FileIO, root: String, s: Snapshot, op: WriteOperation, readVersion: Long): Unit = {
    val committed = committedOperation(io, root, s)
    op match {
      case o: WriteOperation.Overwrite if o.mustCreate =>
        throw LanceErrors.concurrentModification(root, readVersion,
          s"another writer created the dataset (version ${s.version}) while this write was creating it")
      case _: WriteOperation.Overwrite => // Overwrite replaces whatever was committed meanwhile.
      case _: WriteOperation.Append =>
        committed match {
          case Some(t) =>
            import TransactionProtos.Transaction.OperationCase._
            t.getOperationCase match {
              case OVERWRITE | RESTORE | UPDATE_MEM_WAL_STATE | CLONE =>
                throw LanceErrors.concurrentModification(root, readVersion,
                  s"version ${s.version} was written by a concurrent ${t.getOperationCase.name.toLowerCase} " +
                    "that replaced the data this append was based on")
              case OPERATION_NOT_SET =>
                throw LanceErrors.concurrentModification(root, readVersion,
                  s"version ${s.version} was written by a concurrent operation this connector does not know")
              case _ => // append, delete, create index, rewrite, merge, ...: compatible with an append
            }
          case None =>
            throw LanceErrors.concurrentModification(root, readVersion,
              s"version ${s.version} records no transaction, so the concurrent change cannot be checked")
        }
    }
  }

  /** The transaction that produced `s`: its `.txn` file, or the inline copy in its manifest. */
  private def committedOperation(io: FileIO, root: String, s: Snapshot): Option[TransactionProtos.Transaction] = {
    val m = s.manifest
    def parse(bytes: Array[Byte]) = try Some(TransactionProtos.Transaction.parseFrom(bytes)) catch {
      case _: com.google.protobuf.InvalidProtocolBufferException => None
    }
    val fromFile =
      if (m.getTransactionFile.isEmpty) None
      else {
        val p = Paths.join(Paths.join(root, "_transactions"), m.getTransactionFile)
        try parse(io.readFully(p)) catch { case _: java.io.IOException => None }
      }
    fromFile.orElse {
      val pos = if (m.hasTransactionSection) Some(m.getTransactionSection)
        else if (m.hasTransactionSectionDeprecated) Some(m.getTransactionSectionDeprecated) else None
      pos.flatMap(p => try parse(ManifestFile.readSection(io, s.manifestPath, p)) catch { case _: LanceException => None })
    }
  }

  private def transaction(readVersion: Long, uuid: String, op: WriteOperation): TransactionProtos.Transaction = {
    val t = TransactionProtos.Transaction.newBuilder().setReadVersion(readVersion).setUuid(uuid)
    op match {
      case WriteOperation.Append(frags) =>
        t.setAppend(TransactionProtos.Transaction.Append.newBuilder().addAllFragments(frags.map(_.toProto(0)).asJava))
      case o: WriteOperation.Overwrite =>
        val ow = TransactionProtos.Transaction.Overwrite.newBuilder()
          .addAllFragments(o.fragments.map(_.toProto(0)).asJava)
          .addAllSchema(SchemaProtos.toProto(o.fields).asJava)
        o.schemaMetadata.foreach { case (k, v) => ow.putSchemaMetadata(k, ByteString.copyFrom(v)) }
        t.setOverwrite(ow)
    }
    t.build()
  }

  private def buildManifest(
      io: FileIO,
      base: Option[Snapshot],
      op: WriteOperation,
      txnName: String,
      opts: CommitOptions): (TableProtos.Manifest.Builder, Option[Array[Byte]]) = {
    val version = base.map(_.version).getOrElse(0L) + 1
    val b = base match {
      case Some(s) =>
        val m = s.manifest.toBuilder
        // Positions into the previous manifest file, and per-version values, do not carry over.
        m.clearIndexSection().clearTransactionSection().clearTransactionSectionDeprecated()
          .clearTag().clearVersionAuxData()
        m
      case None =>
        TableProtos.Manifest.newBuilder()
    }
    val usesRowIds = base match {
      case Some(s) => (s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0
      case None => opts.enableStableRowIds
    }
    var nextRowId = if (usesRowIds) base.map(_.manifest.getNextRowId).getOrElse(0L) else 0L
    val indexSection: Option[Array[Byte]] = op match {
      case _: WriteOperation.Append =>
        base.filter(_.manifest.hasIndexSection).map(s => ManifestFile.readSection(io, s.manifestPath, s.manifest.getIndexSection))
      case _ => None
    }
    var nextId: Long = op match {
      case _: WriteOperation.Overwrite => 0L
      case _ =>
        base.map { s =>
          val m = s.manifest
          val fromFragments = if (m.getFragmentsCount == 0) -1L else m.getFragmentsList.asScala.map(_.getId).max
          math.max(if (m.hasMaxFragmentId) m.getMaxFragmentId & 0xffffffffL else -1L, fromFragments) + 1
        }.getOrElse(0L)
    }
    val newFragments = op.fragments.map { f =>
      val p = f.toProto(nextId).toBuilder
      nextId += 1
      if (usesRowIds) {
        val rows = f.rows
        val seq = RowIdProtos.RowIdSequence.newBuilder().addSegments(range(nextRowId, nextRowId + rows)).build()
        p.setInlineRowIds(seq.toByteString)
        nextRowId += rows
        if (rows > 0) {
          val versions = RowIdProtos.RowDatasetVersionSequence.newBuilder().addRuns(
            RowIdProtos.RowDatasetVersionRun.newBuilder().setSpan(range(0, rows)).setVersion(version)).build().toByteString
          p.setInlineLastUpdatedAtVersions(versions).setInlineCreatedAtVersions(versions)
        }
      }
      p.build()
    }
    op match {
      case _: WriteOperation.Append => newFragments.foreach(b.addFragments)
      case o: WriteOperation.Overwrite =>
        b.clearFragments()
        newFragments.foreach(b.addFragments)
        b.clearFields().addAllFields(SchemaProtos.toProto(o.fields).asJava)
        b.clearSchemaMetadata()
        o.schemaMetadata.foreach { case (k, v) => b.putSchemaMetadata(k, ByteString.copyFrom(v)) }
        val dv = o.dataVersion.map(_.name).orElse(base.map(_.dataStorageVersion)).getOrElse(FileVersion.Default.name)
        b.setDataFormat(TableProtos.Manifest.DataStorageFormat.newBuilder().setFileFormat("lance").setVersion(dv))
    }
    if (b.getFragmentsCount > 0) {
      val maxId = b.getFragmentsList.asScala.map(_.getId).max
      val prev = if (b.hasMaxFragmentId) b.getMaxFragmentId & 0xffffffffL else -1L
      b.setMaxFragmentId(math.max(maxId, prev).toInt)
    }
    if (usesRowIds) b.setNextRowId(nextRowId)
    b.setVersion(version)
    b.setTransactionFile(txnName)
    val now = java.time.Instant.now()
    b.setTimestamp(com.google.protobuf.Timestamp.newBuilder().setSeconds(now.getEpochSecond).setNanos(now.getNano))
    b.setWriterVersion(TableProtos.Manifest.WriterVersion.newBuilder().setLibrary(opts.writerLibrary).setVersion(opts.writerVersion))
    setFlags(b, base, usesRowIds)
    (b, indexSection)
  }

  private def range(start: Long, end: Long): RowIdProtos.U64Segment =
    RowIdProtos.U64Segment.newBuilder().setRange(RowIdProtos.U64Segment.Range.newBuilder().setStart(start).setEnd(end)).build()

  /** Recomputes the data-dependent flags as Lance does and keeps the sticky ones. */
  private def setFlags(b: TableProtos.Manifest.Builder, base: Option[Snapshot], rowIds: Boolean): Unit = {
    val sticky = FeatureFlags.CoveredIndexMetadata | FeatureFlags.FragmentReuseIndexTransitions | NonReusableFieldIds
    var reader = base.map(_.readerFeatureFlags & sticky).getOrElse(0L)
    var writer = base.map(_.writerFeatureFlags & sticky).getOrElse(0L)
    val frags = b.getFragmentsList.asScala
    def both(flag: Long): Unit = { reader |= flag; writer |= flag }
    if (frags.exists(_.hasDeletionFile)) both(FeatureFlags.DeletionFiles)
    if (rowIds) both(FeatureFlags.StableRowIds)
    if (b.getConfigCount > 0) writer |= FeatureFlags.TableConfig
    if (b.getBasePathsCount > 0) both(FeatureFlags.BasePaths)
    val versions = frags.flatMap(_.getFilesList.asScala.map(f => (f.getFileMajorVersion, f.getFileMinorVersion))).distinct
    if (versions.size > 1 || base.exists(s => (s.readerFeatureFlags & FeatureFlags.MixedDataFileVersions) != 0 && versions.size > 1))
      both(FeatureFlags.MixedDataFileVersions)
    b.setReaderFeatureFlags(reader).setWriterFeatureFlags(writer)
  }

  /** `_versions/latest_version_hint.json`, as pylance 14 writes it: a hint only, never trusted by readers. */
  private def writeHint(io: FileIO, log: VersionLog, version: Long): Unit =
    try io.write(Paths.join(log.versionsDir, "latest_version_hint.json"), s"""{"version":$version}""".getBytes("UTF-8"))
    catch { case _: Exception => }
}
