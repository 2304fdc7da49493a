package io.sparklance.storage.s3

import java.io.IOException
import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Duration

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode
import org.slf4j.LoggerFactory

/** A DynamoDB error answer: HTTP status and the exception name (`__type` without namespace). */
final class DynamoDbException(val status: Int, val errorType: String, message: String)
    extends IOException(message)
