package io.sparklance.table.txn

import io.sparklance.proto.TransactionProtos.Transaction

/**
 * One Lance operation (`transaction.proto`'s `oneof operation`) as this connector commits it.
 * Each operation knows three things, so that a new one (Update, Rewrite, Restore, Project,
 * UpdateConfig, CreateIndex, ReserveFragments, Merge, DataReplacement) is one new file:
 *  - how it is recorded: `writeTo` fills the transaction's operation field;
 *  - how it turns the read version's manifest into the next one: `applyTo`;
 *  - what it does when another transaction committed first: `checkAgainst`.
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

  /** What to do about `committed`, which another writer committed after our read version. */
  def checkAgainst(committed: CommittedTransaction): Resolution

  /** Whether the read version's index section carries over as is (Lance keeps it for data ops). */
  def keepsIndices: Boolean

  /** Whether this operation replaces the schema (indices on dropped fields go with them). */
  def changesSchema: Boolean = false

  /** Feature-flag bits this operation may leave set on top of `ManifestBuilder.WriterSupported`. */
  def extraWritableFlags: Long = 0L
}
