package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.proto.TableProtos.IndexMetadata
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.ManifestFile

/**
 * Lance `CreateIndex`: adds `newIndices` to the index section and takes `removedIndices` out
 * of it (by UUID) — `create_scalar_index` (an index of the same name is removed, as its
 * `replace=True` does), and `drop_index` (no new index). Data, schema and fragments stay.
 *
 * Conflicts, as pylance's `check_create_index_txn`: a committed Overwrite or Restore is
 * incompatible (the data indexed is gone), so is a MemWAL change; retryable when the
 * committed transaction is a CreateIndex of an index of the same name, a Rewrite of a fragment
 * our new index covers, a DataReplacement or an Update that rewrote an indexed column in such a
 * fragment (pylance prunes the Update's fragments from the bitmap instead; we ask for a re-run);
 * any other commit is rebased over (appended fragments simply stay unindexed, deleted rows
 * stay masked by deletion files, as in pylance).
 */
final case class CreateIndex(newIndices: Seq[IndexMetadata], removedIndices: Seq[IndexMetadata])
    extends Operation with IndexEdit {
  override def name: String = "CreateIndex"

  override def writeTo(t: Transaction.Builder): Unit =
    t.setCreateIndex(Transaction.CreateIndex.newBuilder()
      .addAllNewIndices(newIndices.asJava).addAllRemovedIndices(removedIndices.asJava))

  override def applyTo(m: ManifestBuilder): Operation = this

  override def editsIndices: Boolean = true

  /** The next index section: the base version's indices without the removed ones, plus ours. */
  override def editIndices(
      root: String,
      readVersion: Long,
      indices: Seq[IndexMetadata]
  ): Seq[IndexMetadata] = {
    val removed = removedIndices.map(i => ManifestFile.uuidText(i.getUuid)).toSet
    indices.filterNot(i => removed(ManifestFile.uuidText(i.getUuid))) ++ newIndices
  }

  private lazy val indexedFields: Set[Int] =
    newIndices.flatMap(_.getFieldsList.asScala.map(_.intValue)).toSet

  private lazy val covered: Set[Long] =
    newIndices.flatMap(i => Rewrite.bitmap(i).toArray.map(_.toLong)).toSet

  override def conflictRow: ConflictRow = ConflictRow.CreateIndex

  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution = kind match {
    case OperationKind.CreateIndex =>
      val names = newIndices.map(_.getName).toSet
      val same = c.txn.get.getCreateIndex.getNewIndicesList.asScala.map(_.getName)
        .filter(names).toSeq.distinct
      if (same.isEmpty) Resolution.Rebase
      else Resolution.Retryable(s"the ${c.operationName} also created index ${same.mkString(", ")}")
    case OperationKind.Rewrite =>
      Resolution.retryableOnOverlap(
        c,
        c.rewrittenFragmentIds,
        "rewrote",
        covered,
        "this index covers, so its row addresses no longer hold"
      )
    case OperationKind.DataReplacement =>
      val hit = c.txn.get.getDataReplacement.getReplacementsList.asScala.exists { r =>
        r.getNewFile.getFieldsList.asScala.exists(f => indexedFields(f.intValue))
      }
      if (!hit) Resolution.Rebase
      else Resolution.Retryable(s"the ${c.operationName} replaced the data of an indexed column")
    case OperationKind.Update =>
      val u = c.txn.get.getUpdate
      if (u.getFieldsModifiedList.asScala.exists(f => indexedFields(f.intValue)))
        Resolution.retryableOnOverlap(
          c,
          c.updatedFragmentIds,
          "rewrote the indexed column in",
          covered,
          "this index covers"
        )
      else Resolution.Rebase
    case other => ConflictTable.noRule(this, other)
  }

  override def keepsIndices: Boolean = true
}
