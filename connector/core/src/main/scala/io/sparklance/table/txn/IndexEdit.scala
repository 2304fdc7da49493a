package io.sparklance.table.txn

import io.sparklance.proto.TableProtos.IndexMetadata

/**
 * An operation that changes the index section (CreateIndex; a Rewrite that remapped indices):
 * the next manifest's indices are `editIndices` of the base version's, rather than the base
 * version's section carried over.
 */
trait IndexEdit {

  /** Whether this instance changes the index section at all. */
  def editsIndices: Boolean

  /** The next index section's indices, from the base version's (`root`: for errors). */
  def editIndices(root: String, readVersion: Long, indices: Seq[IndexMetadata]): Seq[IndexMetadata]
}
