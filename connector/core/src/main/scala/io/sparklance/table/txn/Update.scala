package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.proto.{TableProtos, TransactionProtos}
import io.sparklance.table.RowIdSequences

/**
 * Lance `Update` in pylance's REWRITE_ROWS mode (what `ds.update` and `merge_insert` write):
 * the rows it changes are deleted from their fragments (`rows`: row offsets per fragment,
 * merged into the deletion vectors as a Delete does) and written again, with their new
 * values, into new fragments (`newRows`), followed by any rows it inserts.
 *
 * `updatedFields` are the ids of the fields whose values changed (pylance records them as
 * `fields_for_preserving_frag_bitmap`); `fields_modified` stays empty, as pylance leaves it
 * in this mode. With stable row ids the moved rows keep their ids and created-at versions.
 *
 * Rebasing (pylance's `check_update_txn`): over transactions that touch none of the
 * fragments it changes it commits on the newer version; when a concurrent Delete or Update
 * changed one of them, it rebases only if that one changed deletion vectors alone and no row
 * of ours, else it is a retryable conflict: re-running the update on the newer version (what
 * pylance's `update` does, see [[Committer.execute]]) reads the other writer's values.
 *
 * A merge keyed on the table's primary key records the keys it inserts (`insertedKeys`,
 * pylance's `inserted_rows`) and then, before the rules above, conflicts (retryably) with any
 * concurrent Append, with any concurrent Update that records no keys or other key fields, and
 * with one whose keys may include one of ours: two merges never both insert a key.
 *
 * `updated`, `removed` and `written` are what one attempt wrote; the transaction records them.
 */
final case class Update(
    rows: Map[Long, RoaringBitmap],
    newRows: Seq[NewRows],
    updatedFields: Seq[Int],
    updated: Seq[TableProtos.DataFragment] = Nil,
    removed: Seq[Long] = Nil,
    insertedKeys: Option[KeyExistenceFilter] = None
) extends Operation {
  import TransactionProtos.Transaction

  override def name: String = "Update"

  /** New fragments with rows (an update that matched nothing writes none, as pylance's). */
  private def written: Seq[NewRows] = newRows.filter(_.fragment.rows > 0)

  /** Fragments this update deletes rows from. */
  private def touched: Set[Long] = rows.filter(!_._2.isEmpty).keySet

  override def writeTo(t: Transaction.Builder): Unit = {
    val u = Transaction.Update.newBuilder()
      .addAllRemovedFragmentIds(removed.map(Long.box).asJava)
      .addAllUpdatedFragments(updated.asJava)
      .addAllFieldsForPreservingFragBitmap(updatedFields.map(Int.box).asJava)
      .setUpdateMode(Transaction.UpdateMode.REWRITE_ROWS)
    insertedKeys.foreach(k => u.setInsertedRows(k.toProto))
    // As pylance records them: ids assigned at commit, the carried row ids only.
    written.foreach { r =>
      val p = r.fragment.toProto(0).toBuilder
      if (r.keptRowIds.nonEmpty)
        p.setInlineRowIds(RowIdSequences.encode(r.keptRowIds).toByteString)
      u.addNewFragments(p)
    }
    t.setUpdate(u)
  }

  override def applyTo(m: ManifestBuilder): Operation = {
    val d = FragmentDeletions(m, rows, name, failOnOverlap = true)
    m.rewrittenFragments(written, touched).foreach(m.manifest.addFragments)
    copy(updated = d.updated, removed = d.removed)
  }

  override def conflictRow: ConflictRow = ConflictRow.Update

  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution =
    insertedKeys.flatMap(keyConflict(_, kind, c)).getOrElse(rowConflict(kind, c))

  /** pylance's primary-key rules, checked first when this Update records inserted keys. */
  private def keyConflict(
      ours: KeyExistenceFilter,
      kind: OperationKind,
      c: CommittedTransaction
  ): Option[Resolution] = kind match {
    case OperationKind.Append => Some(Resolution.Retryable(s"the ${c.operationName} may have " +
        "added keys this Update inserts"))
    case OperationKind.Update => c.insertedKeys match {
        case None => Some(Resolution.Retryable(s"the ${c.operationName} recorded no inserted " +
            "keys to check against the keys this Update inserts"))
        case Some(theirs) if theirs.fieldIds != ours.fieldIds =>
          Some(Resolution.Retryable(s"the ${c.operationName} inserted keys of other columns"))
        case Some(theirs) if ours.mayIntersect(theirs) =>
          Some(Resolution.Retryable(s"the ${c.operationName} may have inserted a key this " +
            "Update inserts"))
        case _ => None
      }
    case _ => None
  }

  private def rowConflict(kind: OperationKind, c: CommittedTransaction): Resolution = {
    def overlap(ids: Set[Long], what: String): Resolution =
      Resolution.retryableOnOverlap(c, ids, what, touched, "this Update changes rows of")
    kind match {
      // An append adds no row this changes; only the key rules above can refuse it.
      case OperationKind.Append => Resolution.Rebase
      case OperationKind.Rewrite => overlap(c.rewrittenFragmentIds, "rewrote")
      case OperationKind.DataReplacement =>
        overlap(c.replacedFragmentIds, "replaced the data files of")
      // Deletion vectors only: rebased in applyTo, which fails on a row both changed.
      case OperationKind.Delete | OperationKind.Update =>
        val removedHit = overlap(c.removedFragmentIds, "removed")
        if (removedHit != Resolution.Rebase) removedHit
        else if (kind == OperationKind.Update && c.txn.get.getUpdate.getFieldsModifiedCount > 0)
          overlap(c.updatedFragmentIds, "rewrote columns of")
        else Resolution.Rebase
      case other => ConflictTable.noRule(this, other)
    }
  }

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
