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
    removed: Seq[Long] = Nil) extends Operation {
  import Transaction.OperationCase._

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

  /** pylance's resolver for a Delete whose affected rows are known (`conflict_resolver.rs`). */
  override def checkAgainst(c: CommittedTransaction): Resolution = {
    val ours = rows.keySet
    def touched(ids: Set[Long], what: String): Resolution =
      Resolution.retryableOnOverlap(c, ids, what, ours, "this Delete deletes from, so its " +
        "row offsets no longer address the same rows")
    c.operationCase match {
      case OVERWRITE | RESTORE | UPDATE_MEM_WAL_STATE =>
        Resolution.Incompatible(
          s"the ${c.operationName} replaced the data this Delete was based on")
      case MERGE => Resolution.Retryable(s"the ${c.operationName} rewrote every fragment's columns")
      // Deletion vectors of the same fragment are merged on rebase; rows a concurrent delete
      // already removed (even a whole fragment) stay removed, which is what pylance's
      // re-execution of the predicate yields too.
      case DELETE => Resolution.Rebase
      case UPDATE =>
        val u = c.txn.get.getUpdate
        if (u.getFieldsModifiedCount > 0 || u.getUpdateModeValue != 0)
          touched(c.updatedFragmentIds, "rewrote columns of")
        else touched(c.removedFragmentIds, "moved every row out of")
      case REWRITE => touched(c.rewrittenFragmentIds, "rewrote")
      case DATA_REPLACEMENT => touched(c.replacedFragmentIds, "replaced the data files of")
      case _ => Resolution.Rebase
    }
  }

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
