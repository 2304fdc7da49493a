package io.sparklance.table.txn

import org.slf4j.LoggerFactory

import io.sparklance.{LanceConcurrentModificationException, LanceErrors}

/**
 * Decides whether our transaction (read at `readVersion`) may commit on top of the
 * transactions committed since, by pylance's rules ([[ConflictTable]]); a version whose
 * transaction is missing or names an operation this connector does not know conflicts, since
 * nothing can be checked.
 */
final class ConflictResolver(root: String) {
  private val log = LoggerFactory.getLogger(classOf[ConflictResolver])

  /** Returns normally when `op` can be rebased over all of `committed`; throws otherwise. */
  def check(op: Operation, readVersion: Long, committed: Seq[CommittedTransaction]): Unit =
    committed.foreach { c =>
      val r = c.txn match {
        case None =>
          Resolution.Incompatible(
            "that version records no transaction, so the change cannot be checked"
          )
        case Some(t) => OperationKind.of(t.getOperationCase) match {
            case None => Resolution.Incompatible(
                "that version's transaction has an operation this connector does not know"
              )
            case Some(kind) => ConflictTable.resolve(op, kind, c)
          }
      }
      r match {
        case Resolution.Rebase =>
          log.debug(
            "{} read at version {} rebases over {} at version {} in {}",
            op.name,
            Long.box(readVersion),
            c.operationName,
            Long.box(c.version),
            root
          )
        case Resolution.Retryable(why) => throw conflict(op, readVersion, c, retryable = true, why)
        case Resolution.Incompatible(why) =>
          throw conflict(op, readVersion, c, retryable = false, why)
      }
    }

  private def conflict(
      op: Operation,
      readVersion: Long,
      c: CommittedTransaction,
      retryable: Boolean,
      why: String
  ): LanceConcurrentModificationException = {
    val kind = if (retryable) "retryable conflict" else "incompatible transaction"
    log.warn(
      "Commit conflict ({}) in {}: {} read at version {} vs {} committed at version {}: {}",
      kind,
      root,
      op.name,
      Long.box(readVersion),
      c.operationName,
      Long.box(c.version),
      why
    )
    LanceErrors.concurrentModification(
      root,
      readVersion,
      s"this ${op.name} conflicts with the ${c.operationName} committed at version ${c.version} " +
        s"($kind: $why)",
      retryable
    )
  }
}
