package io.sparklance.table.txn

/**
 * The outcome of checking our transaction against one committed after our read version,
 * in pylance's terms: compatible (commit on top of it, the manifest rebuilt from the newer
 * version), retryable conflict (pylance re-executes the whole operation) or incompatible.
 */
sealed abstract class Resolution extends Serializable

object Resolution {

  /** Commit on top of the other transaction: the next manifest is built from the newer version. */
  case object Rebase extends Resolution

  /** pylance's `RetryableCommitConflict`: the operation must be re-run against the new version. */
  final case class Retryable(reason: String) extends Resolution

  /** pylance's `IncompatibleTransaction`: re-running does not help. */
  final case class Incompatible(reason: String) extends Resolution

  /**
   * Retryable when the committed transaction `c` changed fragments (`theirs`, described by
   * `what`: "rewrote", ...) among `ours`, which this operation `uses` ("compacts", ...);
   * else a rebase.
   */
  def retryableOnOverlap(
      c: CommittedTransaction,
      theirs: Set[Long],
      what: String,
      ours: Set[Long],
      uses: String
  ): Resolution = {
    val hit = theirs.intersect(ours)
    if (hit.isEmpty) Rebase
    else Retryable(s"the ${c.operationName} $what fragment(s) " +
      s"${hit.toSeq.sorted.mkString(", ")} $uses")
  }
}
