package io.sparklance.table.txn

import io.sparklance.table.txn.{ConflictCell => C, ConflictRow => R, OperationKind => K}

/**
 * What a commit does when another transaction was committed after the version it read: one
 * cell for every pair of an operation this connector commits (a [[ConflictRow]]) and an
 * operation any Lance writer records (an [[OperationKind]]), with pylance 14.0.2's outcome
 * (`TransactionMatrixSuite` runs every pair against pylance). Every row matches over every
 * kind without a default, and the rows are matched without one too: the build makes such a
 * match that misses a case an error (`-Wconf`, build.sbt), so a new operation or kind does
 * not compile until its row and column are filled. TRANSACTIONS.md carries [[markdown]]
 * (`ConflictTableSuite` checks it).
 */
object ConflictTable {
  private val Rebase = C.Rebase

  /** The cell of `row` against a committed `kind`. */
  def cell(row: ConflictRow, kind: OperationKind): ConflictCell = row match {
    case R.Append => append(kind)
    case R.Create => create(kind)
    case R.Overwrite => overwrite(kind)
    case R.Delete => delete(kind)
    case R.Update => update(kind)
    case R.ColumnUpdate => columnUpdate(kind)
    case R.Restore => restore(kind)
    case R.UpdateConfig => updateConfig(kind)
    case R.Project => project(kind)
    case R.Merge => merge(kind)
    case R.ReserveFragments => reserveFragments(kind)
    case R.CreateIndex => createIndex(kind)
    case R.Rewrite => rewrite(kind)
    case R.DataReplacement => dataReplacement(kind)
  }

  /** `op` against the committed `c` (whose operation is `kind`). */
  def resolve(op: Operation, kind: OperationKind, c: CommittedTransaction): Resolution =
    cell(op.conflictRow, kind) match {
      case C.Rebase => Resolution.Rebase
      case C.Retry(why) => Resolution.Retryable(s"the ${c.operationName} $why")
      case C.Incompatible(why) => Resolution.Incompatible(s"the ${c.operationName} $why")
      case C.Depends(_) => op.refine(kind, c)
    }

  /** What an operation's `refine` throws for a kind its row does not mark as Depends. */
  def noRule(op: Operation, kind: OperationKind): Nothing =
    throw new IllegalStateException(
      s"the conflict table sends ${op.conflictRow.name} against ${kind.name} to no rule"
    )

  // An append only adds fragments: it lands on top of everything but what replaced the data.
  private def append(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore | K.UpdateMemWalState =>
      C.Incompatible("replaced the data this Append was based on")
    case K.Append | K.Delete | K.CreateIndex | K.Rewrite | K.Merge | K.ReserveFragments |
        K.Update | K.Project | K.UpdateConfig | K.DataReplacement | K.Clone | K.UpdateBases |
        K.DataOverlay => Rebase
  }

  private def create(k: OperationKind): ConflictCell = k match {
    case K.Append | K.Delete | K.Overwrite | K.CreateIndex | K.Rewrite | K.Merge | K.Restore |
        K.ReserveFragments | K.Update | K.Project | K.UpdateConfig | K.DataReplacement |
        K.UpdateMemWalState | K.Clone | K.UpdateBases | K.DataOverlay =>
      C.Incompatible("created the dataset while this write was creating it")
  }

  // An overwrite does not depend on what it read; two racing are a retryable conflict in
  // pylance 14 (Committer.execute commits the same overwrite again on the newer version). A
  // config key both set (or one removes) cannot be ordered (pylance's upsert_key_conflict).
  private def overwrite(k: OperationKind): ConflictCell = k match {
    case K.UpdateMemWalState => C.Incompatible("cannot be overwritten")
    case K.Overwrite => C.Depends("incompatible when both change a config key, else retryable")
    case K.UpdateConfig => C.Depends("incompatible when both change a config key")
    case K.Append | K.Delete | K.CreateIndex | K.Rewrite | K.Merge | K.Restore |
        K.ReserveFragments | K.Update | K.Project | K.DataReplacement | K.Clone | K.UpdateBases |
        K.DataOverlay => Rebase
  }

  // Deletion vectors of one fragment are merged on rebase; rows a concurrent delete already
  // removed stay removed, as pylance's re-run of the predicate finds.
  private def delete(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore | K.UpdateMemWalState =>
      C.Incompatible("replaced the data this Delete was based on")
    case K.Merge => C.Retry("rewrote every fragment's columns")
    case K.Update => C.Depends("retryable when it rewrote columns of, or moved every row " +
        "out of, a fragment this deletes from")
    case K.Rewrite | K.DataReplacement =>
      C.Depends("retryable when it rewrote a fragment this deletes from")
    case K.Append | K.Delete | K.CreateIndex | K.ReserveFragments | K.Project | K.UpdateConfig |
        K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  // Deletion vectors only are rebased (applyTo fails on a row both changed); with inserted
  // primary keys, pylance's key rules come first.
  private def update(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore => C.Incompatible("replaced the data this Update read")
    case K.Merge => C.Retry("rewrote every fragment's columns")
    case K.Append => C.Depends("retryable when this inserts primary keys (it may have added " +
        "them)")
    case K.Update => C.Depends("retryable when both insert keys that may meet, or it " +
        "removed or rewrote columns of a fragment this changes")
    case K.Delete => C.Depends("retryable when it removed a fragment this changes")
    case K.Rewrite | K.DataReplacement =>
      C.Depends("retryable when it rewrote a fragment this changes")
    case K.CreateIndex | K.ReserveFragments | K.Project | K.UpdateConfig |
        K.UpdateMemWalState | K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  // Unlike a row rewrite, no deletion vectors are merged: any change to the fragment counts.
  private def columnUpdate(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore | K.UpdateMemWalState =>
      C.Incompatible("replaced the data this update read")
    case K.Merge => C.Retry("rewrote every fragment's columns")
    case K.Delete | K.Update | K.Rewrite | K.DataReplacement =>
      C.Depends("retryable when it changed a fragment this rewrites columns of")
    case K.Project => C.Depends("incompatible when it dropped a column this rewrites")
    case K.Append | K.CreateIndex | K.ReserveFragments | K.UpdateConfig | K.Clone |
        K.UpdateBases | K.DataOverlay => Rebase
  }

  private def restore(k: OperationKind): ConflictCell = k match {
    case K.UpdateMemWalState => C.Incompatible("cannot be restored over")
    case K.Append | K.Delete | K.Overwrite | K.CreateIndex | K.Rewrite | K.Merge | K.Restore |
        K.ReserveFragments | K.Update | K.Project | K.UpdateConfig | K.DataReplacement |
        K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  private def updateConfig(k: OperationKind): ConflictCell = k match {
    case K.Overwrite => C.Depends("incompatible when this changes schema or field metadata, " +
        "or both set a config key")
    case K.UpdateConfig => C.Depends("incompatible when both change a config key, the schema " +
        "metadata or one field's metadata")
    case K.Append | K.Delete | K.CreateIndex | K.Rewrite | K.Merge | K.Restore |
        K.ReserveFragments | K.Update | K.Project | K.DataReplacement | K.UpdateMemWalState |
        K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  private def project(k: OperationKind): ConflictCell = k match {
    case K.Merge | K.Project => C.Retry("changed the schema this Project was made from")
    case K.Overwrite | K.Restore | K.UpdateMemWalState =>
      C.Incompatible("replaced the schema this Project changes")
    case K.Append | K.Delete | K.CreateIndex | K.Rewrite | K.ReserveFragments | K.Update |
        K.UpdateConfig | K.DataReplacement | K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  // A Merge carries the whole fragment list as it read it.
  private def merge(k: OperationKind): ConflictCell = k match {
    case K.CreateIndex | K.ReserveFragments | K.Clone | K.UpdateConfig | K.UpdateBases => Rebase
    case K.Overwrite | K.Restore | K.Project | K.UpdateMemWalState =>
      C.Incompatible("replaced the schema or data this Merge was made from")
    case K.Append | K.Delete | K.Rewrite | K.Merge | K.Update | K.DataReplacement |
        K.DataOverlay => C.Retry("changed the fragments this Merge was made from")
  }

  private def reserveFragments(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore => C.Incompatible("replaced the data ids were reserved for")
    case K.Append | K.Delete | K.CreateIndex | K.Rewrite | K.Merge | K.ReserveFragments |
        K.Update | K.Project | K.UpdateConfig | K.DataReplacement | K.UpdateMemWalState |
        K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  // New fragments stay unindexed, so data added meanwhile is no conflict.
  private def createIndex(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore | K.UpdateMemWalState =>
      C.Incompatible("replaced the data this index was built on")
    case K.CreateIndex => C.Depends("retryable when it created an index of the same name")
    case K.Rewrite => C.Depends("retryable when it rewrote a fragment this index covers")
    case K.DataReplacement => C.Depends("retryable when it replaced an indexed column's data")
    case K.Update => C.Depends("retryable when it rewrote the indexed column in a fragment " +
        "this index covers")
    case K.Append | K.Delete | K.Merge | K.ReserveFragments | K.Project | K.UpdateConfig |
        K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  private def rewrite(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore => C.Incompatible("replaced the data this Rewrite compacts")
    case K.Merge => C.Retry("changed every fragment")
    case K.Delete | K.Update | K.Rewrite | K.DataReplacement =>
      C.Depends("retryable when it changed a fragment this compacts")
    case K.CreateIndex => C.Depends("retryable when it covers a fragment this compacts, or " +
        "dropped or replaced an index this remaps")
    case K.Append | K.ReserveFragments | K.Project | K.UpdateConfig | K.UpdateMemWalState |
        K.Clone | K.UpdateBases | K.DataOverlay => Rebase
  }

  private def dataReplacement(k: OperationKind): ConflictCell = k match {
    case K.Overwrite | K.Restore | K.UpdateMemWalState =>
      C.Incompatible("replaced the data this DataReplacement replaces")
    case K.Merge => C.Retry("changed data this DataReplacement replaces")
    case K.Delete => C.Depends("incompatible when it removed a fragment this replaces")
    case K.Update => C.Depends("incompatible when it removed a fragment this replaces; " +
        "retryable when it changed one")
    case K.Rewrite => C.Depends("retryable when it rewrote a fragment this replaces")
    case K.DataReplacement => C.Depends("retryable when it replaced a field this replaces in " +
        "the same fragment")
    case K.CreateIndex => C.Depends("retryable when it indexed a field this replaces")
    case K.Project => C.Depends("incompatible when it dropped a field this replaces")
    case K.Append | K.ReserveFragments | K.UpdateConfig | K.Clone | K.UpdateBases |
        K.DataOverlay => Rebase
  }

  /**
   * The table as TRANSACTIONS.md shows it: a grid (`·` rebase, `R` retryable, `X`
   * incompatible, `?` depends, numbered) and the rule of every `?`.
   */
  def markdown: String = {
    val rules = new java.util.LinkedHashMap[String, Int]()
    def mark(c: ConflictCell): String = c match {
      case C.Rebase => "·"
      case C.Retry(_) => "R"
      case C.Incompatible(_) => "X"
      case C.Depends(rule) =>
        if (!rules.containsKey(rule)) rules.put(rule, rules.size + 1)
        s"?${rules.get(rule)}"
    }
    val sb = new StringBuilder
    sb ++= "| ours \\ committed | " ++= OperationKind.all.map(_.name).mkString(" | ") ++= " |\n"
    sb ++= "|---|" ++= OperationKind.all.map(_ => "---|").mkString ++= "\n"
    ConflictRow.all.foreach { row =>
      sb ++= s"| ${row.name} | " ++=
        OperationKind.all.map(k => mark(cell(row, k))).mkString(" | ") ++= " |\n"
    }
    sb ++= "\n"
    rules.forEach((rule, n) => sb ++= s"$n. $rule\n")
    sb.toString
  }
}
