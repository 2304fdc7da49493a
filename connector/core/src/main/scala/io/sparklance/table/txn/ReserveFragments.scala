package io.sparklance.table.txn

import io.sparklance.proto.TransactionProtos.Transaction

/**
 * Lance `ReserveFragments`: takes the next `count` fragment ids without adding fragments
 * (raises `max_fragment_id`), so a later Rewrite can name its new fragments before it
 * commits — what pylance's `compact_files` commits first. `first` is the first id this
 * attempt reserved (set when applied).
 *
 * Conflicts (pylance's `check_reserve_fragments_txn`): incompatible with a committed
 * Overwrite or Restore, rebased over everything else.
 */
final case class ReserveFragments(count: Int, first: Long = -1L) extends Operation {
  override def name: String = "ReserveFragments"

  override def writeTo(t: Transaction.Builder): Unit =
    t.setReserveFragments(Transaction.ReserveFragments.newBuilder().setNumFragments(count))

  override def applyTo(m: ManifestBuilder): Operation = copy(first = m.reserveFragmentIds(count))

  override def conflictRow: ConflictRow = ConflictRow.ReserveFragments

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
