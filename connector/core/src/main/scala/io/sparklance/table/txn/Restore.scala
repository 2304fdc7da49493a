package io.sparklance.table.txn

import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.{LanceDataset, VersionSpec}

/**
 * Lance `Restore`: makes an older version the latest again. The new version is the old
 * version's manifest (fragments, schema, config, metadata, index section) as pylance 14's
 * `ds.restore()` writes it, while what must never go backwards is kept from the newest
 * version: `max_fragment_id`, `next_row_id` and `max_allocated_field_id`, so ids used since
 * are not handed out again.
 *
 * A restore does not depend on what it read: it lands on top of any committed transaction
 * (pylance's `check_restore_txn`; only MemWAL state changes are incompatible).
 */
final case class Restore(version: Long) extends Operation {
  override def name: String = "Restore"

  override def writeTo(t: Transaction.Builder): Unit =
    t.setRestore(Transaction.Restore.newBuilder().setVersion(version))

  override def applyTo(m: ManifestBuilder): Operation = {
    val old = LanceDataset.open(m.fileIO, m.root).open(VersionSpec.Number(version))
    val b = m.manifest
    val latest = b.build()
    b.clear().mergeFrom(old.manifest).clearIndexSection().clearTransactionSection()
      .clearTransactionSectionDeprecated().clearTag().clearVersionAuxData()
    if (
      latest.hasMaxAllocatedFieldId &&
      (!b.hasMaxAllocatedFieldId || b.getMaxAllocatedFieldId < latest.getMaxAllocatedFieldId)
    )
      b.setMaxAllocatedFieldId(latest.getMaxAllocatedFieldId)
    m.indicesFrom = Some(old)
    this
  }

  override def conflictRow: ConflictRow = ConflictRow.Restore

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
