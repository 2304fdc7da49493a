package io.sparklance.table.txn

final case class CommitResult(version: Long, manifestPath: String, attempts: Int)
