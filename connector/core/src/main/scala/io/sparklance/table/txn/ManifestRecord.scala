package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import io.sparklance.LanceErrors
import io.sparklance.storage.s3.{DynamoDbClient, DynamoDbException}

/** One row of the external manifest store: where `version`'s manifest is, and its size. */
final case class ManifestRecord(version: Long, path: String, size: Option[Long]) {

  /** A staging manifest (`….manifest-{uuid}`) not yet copied to its final name. */
  def staged: Boolean = !path.endsWith(".manifest")
}
