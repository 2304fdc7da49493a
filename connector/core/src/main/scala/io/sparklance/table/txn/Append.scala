package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.commit.NewFragment

/**
 * Lance `Append`: adds fragments to the current version. The transaction records them with
 * id 0, as pylance does: ids are assigned at commit, so a rebased append simply takes the
 * next free ids of the newer version.
 */
final case class Append(fragments: Seq[NewFragment]) extends Operation {
  override def name: String = "Append"

  override def writeTo(t: Transaction.Builder): Unit =
    t.setAppend(Transaction.Append.newBuilder().addAllFragments(fragments.map(_.toProto(0)).asJava))

  override def applyTo(m: ManifestBuilder): Operation = {
    m.newFragments(fragments).foreach(m.manifest.addFragments)
    this
  }

  override def conflictRow: ConflictRow = ConflictRow.Append

  override def keepsIndices: Boolean = true

  // Appending allocates no field ids, so the never-reuse rule stays true.
  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
