package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.storage.FileIO
import io.sparklance.proto.{RowIdProtos, TableProtos}
import io.sparklance.table.{FeatureFlags, ManifestFile, RowIdSequences, Snapshot}
import io.sparklance.table.commit.NewFragment

/**
 * The next manifest while an operation shapes it. It starts as a copy of the read version's
 * manifest (unknown fields kept) with the per-version values cleared; the operation changes
 * fragments and schema through it; `finish` stamps what every commit sets (version,
 * transaction file, timestamp, writer, `max_fragment_id`, `next_row_id`, feature flags).
 *
 * @param readVersion the version the transaction read (0 when creating the dataset)
 * @param base the version the transaction builds on: its read version, or after a rebase the
 *             newer version it is rebased onto; None when creating the dataset.
 */
final class ManifestBuilder(
    val fileIO: FileIO,
    val root: String,
    val readVersion: Long,
    val base: Option[Snapshot],
    val options: CommitOptions
) {

  val version: Long = base.map(_.version).getOrElse(0L) + 1

  val manifest: TableProtos.Manifest.Builder = base match {
    case Some(s) => ManifestBuilder.nextOf(s.manifest)
    case None => TableProtos.Manifest.newBuilder()
  }

  /** Stable row ids (flag 2) are a property of the dataset, chosen when it is created. */
  val usesRowIds: Boolean = base match {
    case Some(s) => (s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0
    case None => options.enableStableRowIds
  }

  private var nextRowId: Long =
    if (usesRowIds) base.map(_.manifest.getNextRowId).getOrElse(0L) else 0L

  /** The highest fragment id ever used: ids are never reused, even after fragments are removed. */
  private val highWater: Long = base.map { s =>
    val m = s.manifest
    val fromFragments = ManifestBuilder.maxId(m.getFragmentsList.asScala)
    math.max(if (m.hasMaxFragmentId) m.getMaxFragmentId & 0xffffffffL else -1L, fromFragments)
  }.getOrElse(-1L)

  private var nextFragmentId: Long = highWater + 1

  /** Ids reserved by this commit (ReserveFragments): `max_fragment_id` covers them. */
  private var reservedUpTo: Long = -1L

  /**
   * Takes the next `count` fragment ids for a later commit and returns the first, as
   * pylance's ReserveFragments does (`max_fragment_id.unwrap_or(0) + count`).
   */
  def reserveFragmentIds(count: Int): Long = {
    reservedUpTo = math.max(highWater, 0L) + count
    reservedUpTo - count + 1
  }

  /**
   * Fragments for new rows: ids from `max_fragment_id + 1`, and with stable row ids a fresh
   * id range plus created/last-updated version runs at this version (as pylance 14 writes).
   */
  def newFragments(frags: Seq[NewFragment]): Seq[TableProtos.DataFragment] = frags.map { f =>
    val p = f.toProto(nextFragmentId).toBuilder
    nextFragmentId += 1
    if (usesRowIds) {
      val rows = f.rows
      val seq = RowIdProtos.RowIdSequence.newBuilder()
        .addSegments(range(nextRowId, nextRowId + rows)).build()
      p.setInlineRowIds(seq.toByteString)
      nextRowId += rows
      if (rows > 0) {
        val run = RowIdProtos.RowDatasetVersionRun.newBuilder()
          .setSpan(range(0, rows)).setVersion(version)
        val versions =
          RowIdProtos.RowDatasetVersionSequence.newBuilder().addRuns(run).build().toByteString
        p.setInlineLastUpdatedAtVersions(versions).setInlineCreatedAtVersions(versions)
      }
    }
    p.build()
  }

  /**
   * Fragments holding rows an Update rewrote (and rows it inserted): as [[newFragments]],
   * except that with stable row ids a moved row keeps its row id and its created-at version
   * (looked up in the base version), rows past the carried ids get fresh ids, and every row's
   * last-updated version is this one — what pylance 14's Update writes. `sources` are the
   * fragments the moved rows came from.
   */
  def rewrittenFragments(rows: Seq[NewRows], sources: Set[Long]): Seq[TableProtos.DataFragment] =
    if (!usesRowIds) newFragments(rows.map(_.fragment))
    else {
      lazy val created: Map[Long, Long] =
        base.toSeq.flatMap(_.fragments).filter(f => sources(f.getId)).flatMap { f =>
          RowIdSequences.rowIds(f).toSeq.flatMap { ids =>
            val vs = RowIdSequences.versions(
              f.getInlineCreatedAtVersions,
              ids.length,
              1L
            )
            ids.iterator.zip(vs.iterator)
          }
        }.toMap
      rows.map { r =>
        val n = r.fragment.rows
        val kept = r.keptRowIds
        require(kept.length <= n, s"${kept.length} row ids for $n rows")
        val ids = kept ++ Array.tabulate((n - kept.length).toInt)(i => nextRowId + i)
        nextRowId += n - kept.length
        val createdAt = Array.tabulate(ids.length) { i =>
          if (i < kept.length) created.getOrElse(ids(i), 1L) else version
        }
        val p = r.fragment.toProto(nextFragmentId).toBuilder
        nextFragmentId += 1
        p.setInlineRowIds(RowIdSequences.encode(ids).toByteString)
        if (n > 0)
          p.setInlineCreatedAtVersions(RowIdSequences.encodeVersions(createdAt))
            .setInlineLastUpdatedAtVersions(
              RowIdSequences.encodeVersions(Array.fill(n.toInt)(version))
            )
        p.build()
      }
    }

  /**
   * `f` with every row's last-updated version this one (with stable row ids; as is without):
   * what pylance 14 records when a Merge rewrites a column of every row (a cast).
   */
  def updatedAll(f: TableProtos.DataFragment): TableProtos.DataFragment =
    if (!usesRowIds || f.getPhysicalRows == 0) f
    else f.toBuilder.setInlineLastUpdatedAtVersions(RowIdSequences.encodeVersions(
      Array.fill(f.getPhysicalRows.toInt)(version)
    )).build()

  /** The version whose index section the next manifest carries (a Restore picks its own). */
  var indicesFrom: Option[Snapshot] = base

  /**
   * The index section of the next manifest: an IndexEdit's edit of the base version's; else
   * the one carried over: verbatim when `op` keeps indices and
   * leaves the schema alone; after a schema change without the indices on fields the new
   * schema lacks (Lance's `retain_relevant_indices`; system indices, named `__...`, stay).
   */
  def indexSection(op: Operation): Option[Array[Byte]] = op match {
    case e: IndexEdit if e.editsIndices =>
      val before = indicesFrom.toSeq.flatMap(ManifestFile.indices(fileIO, _))
      val after = e.editIndices(root, readVersion, before)
      if (after.isEmpty) None
      else Some(TableProtos.IndexSection.newBuilder().addAllIndices(after.asJava).build()
        .toByteArray)
    case _ => carriedIndexSection(op)
  }

  private def carriedIndexSection(op: Operation): Option[Array[Byte]] =
    if (!op.keepsIndices) None
    else indicesFrom.filter(_.manifest.hasIndexSection).flatMap { s =>
      val bytes = ManifestFile.indexSection(fileIO, s)
      if (!op.changesSchema) Some(bytes)
      else {
        val ids = manifest.getFieldsList.asScala.map(_.getId).toSet
        val section = TableProtos.IndexSection.parseFrom(bytes)
        val kept = section.getIndicesList.asScala.filter { i =>
          i.getName.startsWith("__") || i.getFieldsList.asScala.forall(f => ids(f.intValue))
        }
        if (kept.size == section.getIndicesCount) Some(bytes)
        else if (kept.isEmpty) None
        else Some(TableProtos.IndexSection.newBuilder().addAllIndices(kept.asJava).build()
          .toByteArray)
      }
    }

  /** Stamps the per-commit values; call once after the operation has applied itself. */
  def finish(txnFileName: String, op: Operation): TableProtos.Manifest.Builder = {
    val b = manifest
    val maxId =
      math.max(math.max(highWater, reservedUpTo), ManifestBuilder.maxId(b.getFragmentsList.asScala))
    if (maxId >= 0) b.setMaxFragmentId(maxId.toInt)
    if (usesRowIds) b.setNextRowId(nextRowId)
    b.setVersion(version)
    b.setTransactionFile(txnFileName)
    val now = java.time.Instant.now()
    b.setTimestamp(com.google.protobuf.Timestamp.newBuilder()
      .setSeconds(now.getEpochSecond).setNanos(now.getNano))
    b.setWriterVersion(TableProtos.Manifest.WriterVersion.newBuilder()
      .setLibrary(options.writerLibrary).setVersion(options.writerVersion))
    setFlags(b)
    b
  }

  /** Recomputes the data-dependent flags as Lance does and keeps the sticky ones. */
  private def setFlags(b: TableProtos.Manifest.Builder): Unit = {
    val sticky = FeatureFlags.CoveredIndexMetadata | FeatureFlags.FragmentReuseIndexTransitions |
      ManifestBuilder.NonReusableFieldIds
    var reader = base.map(_.readerFeatureFlags & sticky).getOrElse(0L)
    var writer = base.map(_.writerFeatureFlags & sticky).getOrElse(0L)
    val frags = b.getFragmentsList.asScala
    def both(flag: Long): Unit = { reader |= flag; writer |= flag }
    if (frags.exists(_.hasDeletionFile)) both(FeatureFlags.DeletionFiles)
    if (usesRowIds) both(FeatureFlags.StableRowIds)
    if (b.getConfigCount > 0) writer |= FeatureFlags.TableConfig
    if (b.getBasePathsCount > 0) both(FeatureFlags.BasePaths)
    val versions = frags.flatMap(_.getFilesList.asScala)
      .map(f => (f.getFileMajorVersion, f.getFileMinorVersion)).distinct
    if (versions.size > 1) both(FeatureFlags.MixedDataFileVersions)
    // pylance 14.0.2 sets the managed-blobs flag whenever the schema says so, blobs or not.
    val managed = b.getSchemaMetadataMap.get(WritePlan.ManagedBlobsKey)
    if (managed != null && WritePlan.isManagedValue(managed.toStringUtf8))
      both(FeatureFlags.ManagedBlobs)
    b.setReaderFeatureFlags(reader).setWriterFeatureFlags(writer)
  }

  private def range(start: Long, end: Long): RowIdProtos.U64Segment =
    RowIdProtos.U64Segment.newBuilder()
      .setRange(RowIdProtos.U64Segment.Range.newBuilder().setStart(start).setEnd(end)).build()
}

object ManifestBuilder {

  /**
   * A copy of `m` to build a later version's manifest from: positions into `m`'s file (index
   * and transaction sections) and per-version values (tag, auxiliary data) do not carry over.
   */
  def nextOf(m: TableProtos.Manifest): TableProtos.Manifest.Builder =
    m.toBuilder.clearIndexSection().clearTransactionSection()
      .clearTransactionSectionDeprecated().clearTag().clearVersionAuxData()

  /** Writer flags this connector keeps correct when it commits. */
  val WriterSupported: Long = FeatureFlags.DeletionFiles | FeatureFlags.StableRowIds |
    FeatureFlags.UseV2Format | FeatureFlags.TableConfig | FeatureFlags.BasePaths |
    FeatureFlags.CoveredIndexMetadata | FeatureFlags.MixedDataFileVersions |
    FeatureFlags.FragmentReuseIndexTransitions | FeatureFlags.ManagedBlobs

  /** Field ids are never reused (pylance 14); operations that allocate none keep the rule. */
  val NonReusableFieldIds: Long = 1L << 15

  /** The highest fragment id among `frags`, -1 when there are none. */
  private def maxId(frags: Iterable[TableProtos.DataFragment]): Long =
    if (frags.isEmpty) -1L else frags.map(_.getId).max

  /** Fails unless this connector can write a new version with `op` on top of `s`. */
  def checkWritable(s: Snapshot, op: Operation): Unit = {
    FeatureFlags.checkReadable(s.readerFeatureFlags, s.root, s.version)
    val bad =
      FeatureFlags.unsupported(s.writerFeatureFlags, WriterSupported | op.extraWritableFlags)
    if (bad.nonEmpty) throw LanceErrors.unsupportedFeatureFlags(s.root, s.version, "writer", bad)
  }
}
