package io.sparklance.table.txn

import io.sparklance.proto.TransactionProtos.Transaction

/**
 * One Lance operation (`transaction.proto`'s `oneof operation`) as this connector commits it.
 * Each operation knows three things:
 *  - how it is recorded: `writeTo` fills the transaction's operation field;
 *  - how it turns the read version's manifest into the next one: `applyTo`;
 *  - its row of the conflict table (`conflictRow`), which says what it does when another
 *    transaction committed first, and `refine` for the cells that depend on what both
 *    touched. A new operation is one new file, a new [[ConflictRow]], and that row's cells
 *    in [[ConflictTable]] (the build refuses a row left out).
 */
trait Operation extends Serializable {

  /** Lance's name of the operation ("Append", "Delete", ...), as conflict messages use it. */
  def name: String

  /** Sets this operation on a transaction being built. */
  def writeTo(t: Transaction.Builder): Unit

  /**
   * Changes the next manifest (already a copy of the base version's) into what this operation
   * makes, and returns the operation as this attempt records it: the same one for most, a
   * Delete with the deletion files it wrote against this base.
   */
  def applyTo(m: ManifestBuilder): Operation

  /** This operation's row of the conflict table. */
  def conflictRow: ConflictRow

  /**
   * The outcome against `committed` (an operation of `kind`) where this operation's row of
   * the conflict table says it depends on what both touched (`ConflictCell.Depends`).
   */
  def refine(kind: OperationKind, committed: CommittedTransaction): Resolution =
    ConflictTable.noRule(this, kind)

  /** Whether the read version's index section carries over as is (Lance keeps it for data ops). */
  def keepsIndices: Boolean

  /** Whether this operation replaces the schema (indices on dropped fields go with them). */
  def changesSchema: Boolean = false

  /** Feature-flag bits this operation may leave set on top of `ManifestBuilder.WriterSupported`. */
  def extraWritableFlags: Long = 0L
}
