package io.sparklance.table.txn

import io.sparklance.proto.TransactionProtos.Transaction.OperationCase

/**
 * The operations a Lance transaction can record (`transaction.proto`'s `oneof operation`), as
 * a closed set: they are the columns of the conflict table ([[ConflictTable]]), whose rows
 * match over every one of them without a default, so that a kind added here does not compile
 * until every row says what happens against it.
 */
sealed abstract class OperationKind(val name: String) extends Product with Serializable

object OperationKind {
  case object Append extends OperationKind("Append")
  case object Delete extends OperationKind("Delete")
  case object Overwrite extends OperationKind("Overwrite")
  case object CreateIndex extends OperationKind("CreateIndex")
  case object Rewrite extends OperationKind("Rewrite")
  case object Merge extends OperationKind("Merge")
  case object Restore extends OperationKind("Restore")
  case object ReserveFragments extends OperationKind("ReserveFragments")
  case object Update extends OperationKind("Update")
  case object Project extends OperationKind("Project")
  case object UpdateConfig extends OperationKind("UpdateConfig")
  case object DataReplacement extends OperationKind("DataReplacement")
  case object UpdateMemWalState extends OperationKind("UpdateMemWalState")
  case object Clone extends OperationKind("Clone")
  case object UpdateBases extends OperationKind("UpdateBases")
  case object DataOverlay extends OperationKind("DataOverlay")

  /** Every kind, in `transaction.proto`'s order (the conflict table's column order). */
  val all: Seq[OperationKind] = Seq(
    Append,
    Delete,
    Overwrite,
    CreateIndex,
    Rewrite,
    Merge,
    Restore,
    ReserveFragments,
    Update,
    Project,
    UpdateConfig,
    DataReplacement,
    UpdateMemWalState,
    Clone,
    UpdateBases,
    DataOverlay
  )

  /**
   * The kind a recorded transaction's operation is; None when it records none, or one newer
   * than these (a commit over it is refused: nothing can be checked). `OperationKindSuite`
   * checks that every case of the generated enum has its kind.
   */
  def of(c: OperationCase): Option[OperationKind] = all.find(_.name == caseName(c))

  private def caseName(c: OperationCase): String =
    c.name.toLowerCase.split('_').map(_.capitalize).mkString
}
