package io.sparklance.table.txn

import scala.concurrent.duration._

/**
 * How a commit behaves. Retry bounds are pylance 14's defaults (10 retries, 30 s); the
 * backoff doubles from `initialBackoff` up to `maxBackoff`, with full jitter so racing
 * writers spread out instead of colliding again.
 */
final case class CommitOptions(
    maxRetries: Int = 10,
    maxRetryTime: FiniteDuration = 30.seconds,
    initialBackoff: FiniteDuration = 50.millis,
    maxBackoff: FiniteDuration = 5.seconds,
    /** New datasets only: assign stable row ids (flag 2), as pylance's `enable_stable_row_ids`. */
    enableStableRowIds: Boolean = false,
    writerLibrary: String = "spark-lance",
    writerVersion: String = io.sparklance.ConnectorVersion.value,
    /**
     * Recorded in the transaction's `transaction_properties`, as pylance's
     * `transaction_properties`; a commit message goes under [[CommitOptions.CommitMessageKey]].
     */
    transactionProperties: Map[String, String] = Map.empty
) {

  /** These options with `message` as the commit message (pylance's `commit_message`). */
  def withCommitMessage(message: String): CommitOptions =
    copy(transactionProperties =
      transactionProperties + (CommitOptions.CommitMessageKey -> message)
    )
}

object CommitOptions {

  /** The reserved property pylance stores `commit_message` under. */
  val CommitMessageKey = "__lance_commit_message"
}
