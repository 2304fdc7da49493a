package io.sparklance.table.txn

/**
 * One cell of the conflict table ([[ConflictTable]]): what an operation of the row's kind does
 * when a transaction of the column's kind was committed after the version it read.
 */
sealed abstract class ConflictCell extends Product with Serializable

object ConflictCell {

  /** Commit on top of it: the next manifest is built again from the newer version. */
  case object Rebase extends ConflictCell

  /** pylance's retryable conflict, always: "the <their operation> <why>". */
  final case class Retry(why: String) extends ConflictCell

  /** pylance's incompatible transaction, always: "the <their operation> <why>". */
  final case class Incompatible(why: String) extends ConflictCell

  /**
   * Decided by what the two transactions touched (fragments, fields, keys, indices): the
   * operation's `refine` says which; `rule` states it for TRANSACTIONS.md.
   */
  final case class Depends(rule: String) extends ConflictCell
}
