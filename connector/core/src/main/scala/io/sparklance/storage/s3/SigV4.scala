package io.sparklance.storage.s3

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest
import java.time.{ZoneOffset, ZonedDateTime}
import java.time.format.DateTimeFormatter
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * AWS Signature Version 4 (the `Authorization` header form). S3 payloads are sent as
 * `UNSIGNED-PAYLOAD`, which S3 accepts on every request, so bodies are not hashed; DynamoDB
 * signs the body's hash (`payloadHash`, `service = "dynamodb"`).
 */
object SigV4 {
  val UnsignedPayload = "UNSIGNED-PAYLOAD"

  private val AmzDate = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")

  /**
   * The headers to add to a request: `x-amz-date`, `x-amz-content-sha256`, the session token
   * if any, and `Authorization`. `path` is the URI path as sent (already encoded), `query` the
   * decoded query parameters.
   */
  def sign(
      method: String,
      host: String,
      path: String,
      query: Seq[(String, String)],
      region: String,
      credentials: AwsCredentials,
      now: ZonedDateTime = ZonedDateTime.now(ZoneOffset.UTC),
      service: String = "s3",
      payloadHash: String = UnsignedPayload
  ): Seq[(String, String)] = {
    val access = credentials.accessKey
    val secret = credentials.secretKey
    val amzDate = now.withZoneSameInstant(ZoneOffset.UTC).format(AmzDate)
    val day = amzDate.substring(0, 8)
    val base = Seq(
      "host" -> host,
      "x-amz-content-sha256" -> payloadHash,
      "x-amz-date" -> amzDate
    ) ++ credentials.token.map("x-amz-security-token" -> _)
    val headers = base.sortBy(_._1)
    val signedHeaders = headers.map(_._1).mkString(";")
    val canonicalQuery = query.map { case (k, v) => (encode(k), encode(v)) }.sorted
      .map { case (k, v) => s"$k=$v" }.mkString("&")
    val canonical = Seq(
      method,
      path,
      canonicalQuery,
      headers.map { case (k, v) => s"$k:${v.trim}\n" }.mkString,
      signedHeaders,
      payloadHash
    ).mkString("\n")
    val scope = s"$day/$region/$service/aws4_request"
    val toSign = Seq("AWS4-HMAC-SHA256", amzDate, scope, hex(sha256(canonical))).mkString("\n")
    val key = Seq(day, region, service, "aws4_request")
      .foldLeft(("AWS4" + secret).getBytes(UTF_8))((k, part) => hmac(k, part))
    val signature = hex(hmac(key, toSign))
    val authorization = s"AWS4-HMAC-SHA256 Credential=$access/$scope, " +
      s"SignedHeaders=$signedHeaders, Signature=$signature"
    base.filterNot(_._1 == "host") :+ ("Authorization" -> authorization)
  }

  /** RFC 3986 encoding as SigV4 wants it: unreserved characters kept, the rest %XX. */
  def encode(s: String, keepSlash: Boolean = false): String = {
    val bytes = s.getBytes(UTF_8)
    val sb = new java.lang.StringBuilder(bytes.length + 8)
    var i = 0
    while (i < bytes.length) {
      val b = bytes(i) & 0xff
      val c = b.toChar
      if (
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
        c == '-' || c == '_' || c == '.' || c == '~' || (keepSlash && c == '/')
      ) sb.append(c)
      else sb.append('%').append(Character.toUpperCase(Character.forDigit(b >> 4, 16)))
        .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)))
      i += 1
    }
    sb.toString
  }

  /** Hex SHA-256 of a request body, for services that sign the payload (DynamoDB). */
  def payloadSha256(body: Array[Byte]): String =
    hex(MessageDigest.getInstance("SHA-256").digest(body))

  private def sha256(s: String): Array[Byte] =
    MessageDigest.getInstance("SHA-256").digest(s.getBytes(UTF_8))

  private def hmac(key: Array[Byte], data: String): Array[Byte] = {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(new SecretKeySpec(key, "HmacSHA256"))
    mac.doFinal(data.getBytes(UTF_8))
  }

  private def hex(bytes: Array[Byte]): String = {
    val sb = new java.lang.StringBuilder(bytes.length * 2)
    bytes.foreach(b =>
      sb.append(Character.forDigit((b >> 4) & 0xf, 16))
        .append(Character.forDigit(b & 0xf, 16))
    )
    sb.toString
  }
}
