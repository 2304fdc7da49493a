package io.sparklance.table.txn

import java.util.UUID

import scala.jdk.CollectionConverters._

import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.{
  DatasetLayout,
  LanceDataset,
  ManifestFile,
  Snapshot,
  VersionLog,
  VersionSpec
}
import io.sparklance.table.commit.CommitPauses

final case class CommitResult(version: Long, manifestPath: String, attempts: Int)
