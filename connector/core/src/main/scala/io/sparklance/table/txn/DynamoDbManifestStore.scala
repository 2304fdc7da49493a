package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.ObjectNode

import io.sparklance.LanceErrors
import io.sparklance.storage.s3.{DynamoDbClient, DynamoDbException}

/**
 * pylance's DynamoDB external manifest store (`s3+ddb://bucket/path?ddbTableName=t`), row for
 * row: key `base_uri` (the dataset's key in its bucket, e.g. `dir/t.lance`, string, HASH) and
 * `version` (number, RANGE); `path` (the manifest's key), `size`, `committer`. Reads are
 * strongly consistent. A version is claimed by a conditional put that only one writer wins.
 */
final class DynamoDbManifestStore(client: DynamoDbClient, val tableName: String) {
  import DynamoDbManifestStore._

  private def request(): ObjectNode = client.json.createObjectNode().put("TableName", tableName)

  /** Fails unless the table exists with pylance's key schema. */
  def checkTable(): Unit = {
    val answer =
      try client.call("DescribeTable", request())
      catch {
        case e: DynamoDbException if e.errorType == "ResourceNotFoundException" =>
          throw LanceErrors.invalidOption(
            "ddbTableName",
            tableName,
            "no such DynamoDB table; create it with keys base_uri (string, HASH) and version " +
              "(number, RANGE)"
          )
      }
    val keys = Option(answer.path("Table").get("KeySchema")).map(_.elements().asScala.map(k =>
      k.path("AttributeName").asText() -> k.path("KeyType").asText()
    ).toMap).getOrElse(Map.empty)
    if (keys != Map(BaseUri -> "HASH", Version -> "RANGE"))
      throw LanceErrors.invalidOption(
        "ddbTableName",
        tableName,
        s"the table's keys are ${keys.mkString(", ")}; Lance needs base_uri (HASH) and " +
          "version (RANGE)"
      )
  }

  private def item(baseUri: String, version: Long, path: String, size: Long): ObjectNode = {
    val r = request()
    val it = r.putObject("Item")
    it.putObject(BaseUri).put("S", baseUri)
    it.putObject(Version).put("N", version.toString)
    it.putObject(Path).put("S", path)
    it.putObject(Committer).put("S", CommitterName)
    it.putObject(Size).put("N", size.toString)
    r
  }

  private def conditionalPut(r: ObjectNode, condition: String): Boolean = {
    r.put("ConditionExpression", condition)
    try { client.call("PutItem", r); true }
    catch {
      case e: DynamoDbException if e.errorType == "ConditionalCheckFailedException" => false
    }
  }

  /** Records `version` at `path` unless it is recorded; false when it was. */
  def putIfNotExists(baseUri: String, version: Long, path: String, size: Long): Boolean =
    conditionalPut(
      item(baseUri, version, path, size),
      s"attribute_not_exists($BaseUri) AND attribute_not_exists($Version)"
    )

  /** Points the recorded `version` at `path`; false when it is not recorded. */
  def putIfExists(baseUri: String, version: Long, path: String, size: Long): Boolean =
    conditionalPut(
      item(baseUri, version, path, size),
      s"attribute_exists($BaseUri) AND attribute_exists($Version)"
    )

  def get(baseUri: String, version: Long): Option[ManifestRecord] = {
    val r = request().put("ConsistentRead", true)
    val key = r.putObject("Key")
    key.putObject(BaseUri).put("S", baseUri)
    key.putObject(Version).put("N", version.toString)
    Option(client.call("GetItem", r).get("Item")).map(record)
  }

  private def record(it: JsonNode): ManifestRecord = {
    def field(name: String, kind: String): Option[String] =
      Option(it.get(name)).flatMap(v => Option(v.get(kind))).map(_.asText())
    val version = field(Version, "N").map(_.toLong).getOrElse(throw LanceErrors.unsupported(
      s"DynamoDB table $tableName: a row without a numeric $Version"
    ))
    val path = field(Path, "S").getOrElse(throw LanceErrors.unsupported(
      s"DynamoDB table $tableName: version $version has no string $Path"
    ))
    ManifestRecord(version, path, field(Size, "N").map(_.toLong))
  }
}

object DynamoDbManifestStore {
  val BaseUri = "base_uri"
  val Version = "version"
  val Path = "path"
  val Committer = "committer"
  val Size = "size"

  /** What pylance records as the committer. */
  val CommitterName = "lancedb"
}
