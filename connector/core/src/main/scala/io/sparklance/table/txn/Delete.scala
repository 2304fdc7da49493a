package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.proto.TableProtos
import io.sparklance.proto.TransactionProtos.Transaction

/**
 * Lance `Delete`: marks rows deleted. `rows` holds, per fragment id, the row offsets this
 * delete removes (offsets within the fragment, as deletion vectors store them).
 *
 * Applied to a base version it merges with each fragment's current deletion vector and writes
 * the union as a new deletion file (named with the base version, as pylance names them), or
 * drops a fragment whose every row is now deleted (`deleted_fragment_ids`). Because it is
 * re-applied to whatever version it is rebased onto, a concurrent delete's rows are kept:
 * the deletion vectors are merged, never overwritten. A vector merged with one a concurrent
 * transaction wrote (its deletion file's read version is not older than ours) is written as a
 * Roaring bitmap whatever its size: pylance 14 does so when its retry merges a concurrent
 * delete (observed: 2 rows, `.bin`), while its plain deletes below 5000 rows write Arrow.
 *
 * `updated` and `removed` are what one attempt wrote; the transaction records them.
 */
final case class Delete(
    rows: Map[Long, RoaringBitmap],
    predicate: String = "",
    updated: Seq[TableProtos.DataFragment] = Nil,
    removed: Seq[Long] = Nil
) extends Operation {
  override def name: String = "Delete"

  override def writeTo(t: Transaction.Builder): Unit =
    t.setDelete(Transaction.Delete.newBuilder()
      .addAllUpdatedFragments(updated.asJava)
      .addAllDeletedFragmentIds(removed.map(Long.box).asJava)
      .setPredicate(predicate))

  override def applyTo(m: ManifestBuilder): Operation = {
    val d = FragmentDeletions(m, rows, "Delete", failOnOverlap = false)
    copy(updated = d.updated, removed = d.removed)
  }

  override def conflictRow: ConflictRow = ConflictRow.Delete

  /** pylance's resolver for a Delete whose affected rows are known (`conflict_resolver.rs`). */
  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution = {
    def touched(ids: Set[Long], what: String): Resolution =
      Resolution.retryableOnOverlap(
        c,
        ids,
        what,
        rows.keySet,
        "this Delete deletes from, so " +
          "its row offsets no longer address the same rows"
      )
    kind match {
      case OperationKind.Update =>
        val u = c.txn.get.getUpdate
        if (u.getFieldsModifiedCount > 0 || u.getUpdateModeValue != 0)
          touched(c.updatedFragmentIds, "rewrote columns of")
        else touched(c.removedFragmentIds, "moved every row out of")
      case OperationKind.Rewrite => touched(c.rewrittenFragmentIds, "rewrote")
      case OperationKind.DataReplacement =>
        touched(c.replacedFragmentIds, "replaced the data files of")
      case other => ConflictTable.noRule(this, other)
    }
  }

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
