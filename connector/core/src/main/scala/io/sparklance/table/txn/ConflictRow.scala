package io.sparklance.table.txn

/**
 * The operations this connector commits, as rows of the conflict table ([[ConflictTable]]):
 * each [[Operation]] names its row, and the table matches over every row without a default,
 * so a row added here does not compile until its cells are filled. A row is finer than a
 * Lance operation where the rules differ: an Overwrite that must create the dataset, and an
 * Update that rewrites columns in place rather than rows.
 */
sealed abstract class ConflictRow(val name: String) extends Product with Serializable

object ConflictRow {
  case object Append extends ConflictRow("Append")

  /** An Overwrite that must create the dataset (error-if-exists, ignore). */
  case object Create extends ConflictRow("Overwrite (create)")
  case object Overwrite extends ConflictRow("Overwrite")
  case object Delete extends ConflictRow("Delete")

  /** Rows deleted where they were and written again (UPDATE, MERGE INTO, merge-insert). */
  case object Update extends ConflictRow("Update (rows)")

  /** Columns of whole fragments rewritten in place (`update_columns`, backfills). */
  case object ColumnUpdate extends ConflictRow("Update (columns)")
  case object Restore extends ConflictRow("Restore")
  case object UpdateConfig extends ConflictRow("UpdateConfig")
  case object Project extends ConflictRow("Project")
  case object Merge extends ConflictRow("Merge")
  case object ReserveFragments extends ConflictRow("ReserveFragments")
  case object CreateIndex extends ConflictRow("CreateIndex")
  case object Rewrite extends ConflictRow("Rewrite")
  case object DataReplacement extends ConflictRow("DataReplacement")

  /** Every row, in the order TRANSACTIONS.md lists them. */
  val all: Seq[ConflictRow] = Seq(
    Append,
    Create,
    Overwrite,
    Delete,
    Update,
    ColumnUpdate,
    Restore,
    UpdateConfig,
    Project,
    Merge,
    ReserveFragments,
    CreateIndex,
    Rewrite,
    DataReplacement
  )
}
