package io.sparklance.table.commit

import io.sparklance.format.LanceField
import io.sparklance.format.writer.FileVersion
import io.sparklance.storage.FileIO
import io.sparklance.table.Snapshot
import io.sparklance.table.txn

/**
 * The original commit API, kept for callers written against it: it now translates to the
 * operations of `table.txn` and commits through `txn.Committer`. New code uses `table.txn`.
 */
sealed trait WriteOperation {
  def fragments: Seq[NewFragment]
  def toOperation: txn.Operation
}

object WriteOperation {
  /** Add fragments to the current version (Lance `Append`). */
  final case class Append(fragments: Seq[NewFragment]) extends WriteOperation {
    override def toOperation: txn.Operation = txn.Append(fragments)
  }

  /** Replace the whole dataset (Lance `Overwrite`); see [[txn.Overwrite]]. */
  final case class Overwrite(
      fragments: Seq[NewFragment],
      fields: Seq[LanceField],
      schemaMetadata: Map[String, Array[Byte]],
      dataVersion: Option[FileVersion],
      mustCreate: Boolean) extends WriteOperation {
    override def toOperation: txn.Operation =
      txn.Overwrite(fragments, fields, schemaMetadata, dataVersion, mustCreate)
  }
}

final case class CommitOptions(
    /** Attempts in all (the first one included). */
    maxRetries: Int = 20,
    enableStableRowIds: Boolean = false,
    writerLibrary: String = "spark-lance",
    writerVersion: String = CommitOptions.ConnectorVersion) {
  def toTxn: txn.CommitOptions = txn.CommitOptions(
    maxRetries = math.max(0, maxRetries - 1), enableStableRowIds = enableStableRowIds,
    writerLibrary = writerLibrary, writerVersion = writerVersion)
}

object CommitOptions {
  val ConnectorVersion: String = io.sparklance.ConnectorVersion.value
}

object Committer {
  def checkWritable(s: Snapshot, op: WriteOperation): Unit =
    txn.ManifestBuilder.checkWritable(s, op.toOperation)

  def commit(io: FileIO, root: String, base: Option[Snapshot], op: WriteOperation,
      opts: CommitOptions): txn.CommitResult =
    new txn.Committer(io, root, opts.toTxn).commit(base, op.toOperation)
}
