package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.proto.{FileProtos, TableProtos}
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.{SchemaEdits, Snapshot}

/**
 * Lance `Merge`: the whole fragment list and schema replaced by the ones given, made from the
 * read version — what pylance's `add_columns` and `alter_columns(data_type=)` commit
 * (`rewritesRows`: the latter, which updates every row). A column added with no values (all
 * null) changes only the schema: pylance 14 writes no data file for it and readers return
 * nulls for a field no data file holds. The schema metadata is kept.
 *
 * Conflicts (pylance's `check_merge_txn`, the bluntest of all): since the fragment list was
 * made from the read version, any committed change to data (Append, Delete, Update, Rewrite,
 * Merge, DataReplacement) is retryable; Overwrite, Restore and Project are incompatible;
 * CreateIndex, ReserveFragments and UpdateConfig are rebased over.
 */
final case class Merge(
    fragments: Seq[TableProtos.DataFragment],
    fields: Seq[FileProtos.Field],
    rewritesRows: Boolean = false
) extends Operation {
  override def name: String = "Merge"

  override def writeTo(t: Transaction.Builder): Unit =
    t.setMerge(Transaction.Merge.newBuilder().addAllFragments(fragments.asJava)
      .addAllSchema(fields.asJava).setPreservesNullability(true))

  override def applyTo(m: ManifestBuilder): Operation = {
    // A cast rewrites a column of every row: with stable row ids each row's last-updated
    // version becomes this one, as pylance records it.
    val frags = if (rewritesRows) fragments.map(m.updatedAll) else fragments
    m.manifest.clearFragments().addAllFragments(frags.asJava)
      .clearFields().addAllFields(fields.asJava)
    // Tables that track the highest field id ever allocated (writer flag 1 << 15) keep it.
    val b = m.manifest
    val top = (fields.map(_.getId) :+ -1).max
    if (b.hasMaxAllocatedFieldId && top > b.getMaxAllocatedFieldId) b.setMaxAllocatedFieldId(top)
    this
  }

  override def conflictRow: ConflictRow = ConflictRow.Merge

  override def keepsIndices: Boolean = true

  override def changesSchema: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}

object Merge {

  /**
   * Top-level columns added with no values: the same fragments, the schema with `added`
   * appended (their ids from 0 in pre-order, re-numbered past every id the table used).
   */
  def addNullColumns(s: Snapshot, added: Seq[FileProtos.Field]): Merge =
    Merge(s.fragments, SchemaEdits(s).add(added, SchemaEdits.firstFreeId(s.manifest)))
}
