package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.ManifestFile

/**
 * Lance `Rewrite`: groups of adjacent fragments replaced by new fragments holding their live
 * rows (compaction, `ds.optimize.compact_files`). New fragments, with the ids a
 * ReserveFragments committed before, replace the old ones in the id-ordered list; with stable
 * row ids they carry the old rows' ids and versions. Indices covering compacted fragments are
 * remapped as pylance 14 remaps them, with or without stable row ids: `rewrittenIndices` pairs
 * each old index with its rewritten copy (a new UUID; see IndexRemap), recorded in
 * `rewritten_indices` and swapped into the index section; `keptIndices` (UUID -> whether the
 * new fragments join it) are the indices a table with stable row ids keeps as they are but
 * for their fragment bitmaps, as pylance does (nothing recorded); other indices carry over.
 * Should an index being remapped be gone or replaced by the time this commits, the Rewrite
 * is a retryable conflict (its copy would resurrect it).
 *
 * Conflicts (pylance's `check_rewrite_txn`, no fragment-reuse index): a committed Delete or
 * Update that changed one of our old fragments, a Rewrite of one of them, a
 * DataReplacement of one of them, a CreateIndex covering one of them, or any Merge is
 * retryable (compaction is planned again); Overwrite and Restore are incompatible;
 * everything else (Append, ReserveFragments, Project, UpdateConfig) is rebased over.
 */
final case class Rewrite(
    groups: Seq[RewriteGroup],
    rewrittenIndices: Seq[(TableProtos.IndexMetadata, TableProtos.IndexMetadata)] = Nil,
    keptIndices: Map[String, Boolean] = Map.empty
) extends Operation with IndexEdit {
  override def name: String = "Rewrite"

  private lazy val oldIds: Set[Long] = groups.flatMap(_.oldIds).toSet

  override def writeTo(t: Transaction.Builder): Unit = {
    val r = Transaction.Rewrite.newBuilder().addAllGroups(groups.map(_.toProto).asJava)
    rewrittenIndices.foreach { case (old, now) =>
      r.addRewrittenIndices(Transaction.Rewrite.RewrittenIndex.newBuilder()
        .setOldId(old.getUuid).setNewId(now.getUuid)
        .setNewIndexDetails(now.getIndexDetails).setNewIndexVersion(now.getIndexVersion)
        .addAllNewIndexFiles(now.getFilesList))
    }
    t.setRewrite(r)
  }

  override def editsIndices: Boolean = rewrittenIndices.nonEmpty || keptIndices.nonEmpty

  override def editIndices(
      root: String,
      readVersion: Long,
      indices: Seq[TableProtos.IndexMetadata]
  ): Seq[TableProtos.IndexMetadata] = {
    val byUuid = rewrittenIndices.map { case (o, n) => ManifestFile.uuidText(o.getUuid) -> n }
      .toMap
    val present = indices.map(i => ManifestFile.uuidText(i.getUuid)).toSet
    byUuid.keys.find(!present(_)).foreach { u =>
      throw LanceErrors.concurrentModification(
        root,
        readVersion,
        s"index $u, which this " +
          "compaction remaps, was dropped or replaced by a concurrent commit",
        retryable = true
      )
    }
    indices.map { i =>
      val u = ManifestFile.uuidText(i.getUuid)
      byUuid.get(u).orElse(keptIndices.get(u).map(keepWithNewBitmap(i, _))).getOrElse(i)
    }
  }

  /** A kept index's fragment bitmap after this rewrite (see [[Rewrite.bitmapAfter]]). */
  private def keepWithNewBitmap(
      i: TableProtos.IndexMetadata,
      joins: Boolean
  ): TableProtos.IndexMetadata = {
    val bm = Rewrite.bitmap(i)
    if (!oldIds.exists(id => bm.contains(id.toInt))) return i
    val joined = if (joins) Rewrite.joining(groups, bm) else Nil
    i.toBuilder.setFragmentBitmap(Rewrite.bitmapAfter(bm, oldIds, joined)).build()
  }

  override def applyTo(m: ManifestBuilder): Operation = {
    val b = m.manifest
    val frags = b.getFragmentsList.asScala.toVector
    val present = frags.map(_.getId).toSet
    oldIds.find(!present(_)).foreach { id =>
      throw LanceErrors.concurrentModification(
        m.root,
        m.readVersion,
        s"fragment $id, which " +
          "this compaction rewrites, is gone",
        retryable = true
      )
    }
    // The fragment list stays in id order, as pylance 14 keeps it (observed: new fragments
    // after older ones the compaction left, even when they replace the first fragments).
    val next = (frags.filterNot(f => oldIds(f.getId)) ++ groups.flatMap(_.newFragments))
      .sortBy(_.getId)
    b.clearFragments().addAllFragments(next.asJava)
    this
  }

  override def conflictRow: ConflictRow = ConflictRow.Rewrite

  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution = {
    def overlap(ids: Set[Long], what: String): Resolution =
      Resolution.retryableOnOverlap(c, ids, what, oldIds, "this Rewrite compacts")
    kind match {
      case OperationKind.Delete | OperationKind.Update =>
        overlap(c.updatedFragmentIds ++ c.removedFragmentIds, "changed")
      case OperationKind.Rewrite => overlap(c.rewrittenFragmentIds, "also rewrote")
      case OperationKind.DataReplacement => overlap(c.replacedFragmentIds, "replaced data files of")
      case OperationKind.CreateIndex if removesOurs(c) =>
        Resolution.Retryable(s"the ${c.operationName} dropped or replaced an index this " +
          "Rewrite remaps")
      case OperationKind.CreateIndex =>
        val indices = c.txn.get.getCreateIndex.getNewIndicesList.asScala
        if (indices.exists(_.getFragmentBitmap.isEmpty))
          Resolution.Retryable(s"the ${c.operationName} may cover the fragments this Rewrite " +
            "compacts")
        else overlap(indices.flatMap(i => Rewrite.bitmap(i).toArray.map(_.toLong)).toSet, "indexed")
      case other => ConflictTable.noRule(this, other)
    }
  }

  private def removesOurs(c: CommittedTransaction): Boolean = {
    val ours = rewrittenIndices.map(p => ManifestFile.uuidText(p._1.getUuid)).toSet
    c.txn.get.getCreateIndex.getRemovedIndicesList.asScala
      .exists(i => ours(ManifestFile.uuidText(i.getUuid)))
  }

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}

object Rewrite {

  /** An index's fragment bitmap (portable Roaring), empty when it records none. */
  def bitmap(i: TableProtos.IndexMetadata): RoaringBitmap = {
    val bm = new RoaringBitmap()
    if (!i.getFragmentBitmap.isEmpty) bm.deserialize(i.getFragmentBitmap.asReadOnlyByteBuffer())
    bm
  }

  /**
   * The new fragments an index covering `covered` goes on covering after a rewrite of
   * `groups`: those of each group whose old fragments it all covered (pylance 14's rule, for
   * remapped and kept indices alike).
   */
  def joining(groups: Seq[RewriteGroup], covered: RoaringBitmap): Seq[Long] =
    groups.filter(_.oldIds.forall(id => covered.contains(id.toInt)))
      .flatMap(_.newFragments.map(_.getId))

  /**
   * An index's fragment bitmap after a rewrite: `covered` without the rewritten fragments
   * (`removed`) and with the new ones it goes on covering (`joined`, see [[joining]]).
   */
  def bitmapAfter(
      covered: RoaringBitmap,
      removed: Iterable[Long],
      joined: Iterable[Long]
  ): com.google.protobuf.ByteString = {
    val bm = covered.clone()
    removed.foreach(id => bm.remove(id.toInt))
    joined.foreach(id => bm.add(id.toInt))
    bitmapBytes(bm)
  }

  /** A fragment bitmap as an index records it (portable Roaring): what [[bitmap]] reads. */
  def bitmapBytes(bm: RoaringBitmap): com.google.protobuf.ByteString = {
    val buf = java.nio.ByteBuffer.allocate(bm.serializedSizeInBytes())
    bm.serialize(buf)
    com.google.protobuf.ByteString.copyFrom(buf.array())
  }
}
