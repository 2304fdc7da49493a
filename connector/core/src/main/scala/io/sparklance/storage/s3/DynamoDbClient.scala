package io.sparklance.storage.s3

import java.io.IOException
import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import org.slf4j.LoggerFactory

/**
 * DynamoDB's JSON API (`X-Amz-Target: DynamoDB_20120810.<Action>`) over the JDK HTTP client,
 * signed with SigV4 for the `dynamodb` service with the credentials S3 uses. Throttling and
 * server errors are retried with the S3 client's backoff. The endpoint is `dynamodb_endpoint`
 * (pylance: the environment variable DYNAMODB_ENDPOINT), else the region's AWS endpoint.
 */
final class DynamoDbClient(
    config: S3Config,
    env: String => Option[String] = k => Option(System.getenv(k))
) {
  import DynamoDbClient._

  private val credentials = new S3Credentials(config, env)
  private val endpoint = URI.create(config.dynamodbEndpoint.map { e =>
    if (e.contains("://")) e else s"https://$e"
  }.getOrElse(s"https://dynamodb.${config.region}.amazonaws.com") + "/")
  private val http = HttpClient.newBuilder()
    .version(HttpClient.Version.HTTP_1_1)
    .connectTimeout(Duration.ofSeconds(30))
    .build()

  def json: ObjectMapper = Mapper

  /** Calls `action` with `request`; the answer's JSON, or a [[DynamoDbException]]. */
  def call(action: String, request: ObjectNode): JsonNode = {
    val body = Mapper.writeValueAsBytes(request)
    var attempt = 0
    while (true) {
      val outcome =
        try Right(send(action, body))
        catch { case e: IOException => Left(e) }
      val transient = outcome match {
        case Left(_) => true
        case Right((status, node)) => status >= 500 ||
          (status == 400 && Retryable.contains(errorType(node)))
      }
      if (!transient || attempt >= config.maxRetries) outcome match {
        case Right((200, node)) => return node
        case Right((status, node)) =>
          val t = errorType(node)
          val msg = Option(node.get("message")).orElse(Option(node.get("Message")))
            .map(_.asText()).getOrElse("")
          throw new DynamoDbException(status, t, s"DynamoDB $action failed: HTTP $status $t $msg")
        case Left(e) => throw new IOException(
            s"DynamoDB $action at $endpoint failed after ${attempt + 1} attempt(s): " +
              e.getMessage,
            e
          )
      }
      attempt += 1
      val delay = S3Client.backoffMillis(attempt)
      log.warn(s"DynamoDB $action: ${outcome.fold(
          _.getMessage,
          r =>
            s"HTTP ${r._1} " +
              errorType(r._2)
        )}; retry $attempt of ${config.maxRetries} in $delay ms")
      try Thread.sleep(delay)
      catch {
        case e: InterruptedException =>
          Thread.currentThread().interrupt()
          throw new java.io.InterruptedIOException(s"interrupted retrying DynamoDB $action")
      }
    }
    throw new IllegalStateException("unreachable")
  }

  private def send(action: String, body: Array[Byte]): (Int, JsonNode) = {
    val target = s"DynamoDB_20120810.$action"
    val b = HttpRequest.newBuilder(endpoint)
      .timeout(Duration.ofMillis(config.requestTimeoutMillis))
      .POST(HttpRequest.BodyPublishers.ofByteArray(body))
      .header("Content-Type", "application/x-amz-json-1.0")
      .header("X-Amz-Target", target)
    credentials.get.foreach(c =>
      SigV4.sign(
        "POST",
        endpoint.getRawAuthority,
        "/",
        Nil,
        config.region,
        c,
        service = "dynamodb",
        payloadHash = SigV4.payloadSha256(body)
      )
        .foreach { case (k, v) => b.header(k, v) }
    )
    val r =
      try http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray())
      catch {
        case e: InterruptedException =>
          Thread.currentThread().interrupt()
          throw new java.io.InterruptedIOException(s"interrupted in DynamoDB $action")
      }
    val text = new String(r.body(), UTF_8)
    val node = if (text.trim.isEmpty) Mapper.createObjectNode()
    else
      try Mapper.readTree(text)
      catch {
        case _: IOException => Mapper.createObjectNode().put("message", text.take(200))
      }
    (r.statusCode(), node)
  }
}

object DynamoDbClient {
  private val log = LoggerFactory.getLogger(classOf[DynamoDbClient])
  private val Mapper = new ObjectMapper()

  private val Retryable = Set(
    "ThrottlingException",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "InternalServerError",
    "LimitExceededException"
  )

  /** `com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException` → its last part. */
  def errorType(node: JsonNode): String =
    Option(node.get("__type")).map(_.asText()).map(t => t.substring(t.lastIndexOf('#') + 1))
      .getOrElse("")
}
