package io.sparklance.storage.s3

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Duration, Instant}

import com.fasterxml.jackson.databind.ObjectMapper
import org.slf4j.LoggerFactory

/** One set of AWS credentials, and until when it holds (None: static). */
final case class AwsCredentials(
    accessKey: String,
    secretKey: String,
    token: Option[String],
    expires: Option[Instant] = None
) {
  override def toString: String = s"AwsCredentials(expires=${expires.getOrElse("never")})"
}
