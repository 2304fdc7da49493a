package io.sparklance.table

import java.util.UUID

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.storage.{FileIO, FileTrees, Paths}
import io.sparklance.table.txn.{ManifestBuilder, TransactionLog}

/**
 * A branch as pylance 14 records it in `_refs/branches/{name}.json`: made from version
 * `parentVersion` of `parentBranch` (None: main); `versionMapping` pairs versions with ids.
 */
final case class Branch(
    name: String,
    parentBranch: Option[String],
    parentVersion: Long,
    versionMapping: Seq[(Long, String)],
    createAt: Long,
    manifestSize: Long
)
