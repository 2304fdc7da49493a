package io.sparklance.storage.s3

import java.time.{ZoneOffset, ZonedDateTime}

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.Pylance

/** Our SigV4 signatures equal botocore's for the same requests (unsigned payloads). */
class SigV4Suite extends AnyFunSuite {
  private val when = ZonedDateTime.of(2025, 1, 2, 3, 4, 5, 0, ZoneOffset.UTC)

  private def config(token: Option[String] = None, region: String = "us-east-1") =
    S3Config(
      None,
      region,
      Some("AKIDEXAMPLE"),
      Some("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"),
      token,
      pathStyle = true,
      allowHttp = false,
      maxRetries = 0,
      partSize = S3Config.MinPartSize
    )

  private def check(
      method: String,
      host: String,
      key: String,
      query: Seq[(String, String)],
      c: S3Config
  ): Unit = {
    val path = "/my-bucket/" + SigV4.encode(key, keepSlash = true)
    val qs = query.map { case (k, v) => s"${SigV4.encode(k)}=${SigV4.encode(v)}" }.mkString("&")
    val url = s"https://$host$path" + (if (qs.isEmpty) "" else s"?$qs")
    val theirs = Pylance.call(
      "s3_ops",
      "sigv4",
      method,
      url,
      c.accessKey.get,
      c.secretKey.get,
      c.region,
      "20250102T030405Z",
      c.sessionToken.orNull
    )
    val creds = AwsCredentials(c.accessKey.get, c.secretKey.get, c.sessionToken)
    val ours = SigV4.sign(method, host, path, query, c.region, creds, when).toMap
    assert(ours("x-amz-date") == theirs.get("date").asText())
    assert(ours("Authorization") == theirs.get("authorization").asText(), url)
    assert(ours.get("x-amz-security-token") == c.sessionToken)
  }

  test("a GET of a key with spaces, unicode and reserved characters") {
    check("GET", "s3.us-east-1.amazonaws.com", "t/data/a b+c=ü~x.lance", Nil, config())
  }

  test("a listing with query parameters that need encoding") {
    check(
      "GET",
      "s3.eu-west-1.amazonaws.com",
      "",
      Seq(
        "list-type" -> "2",
        "prefix" -> "t/_versions/",
        "delimiter" -> "/",
        "continuation-token" -> "a+b/c=="
      ),
      config(region = "eu-west-1")
    )
  }

  test("multipart calls, a session token, a local endpoint with a port") {
    check(
      "POST",
      "127.0.0.1:9000",
      "t/data/f.lance",
      Seq("uploads" -> ""),
      config(Some("FQoGZXIvYXdzE//token+="))
    )
    check(
      "PUT",
      "127.0.0.1:9000",
      "t/data/f.lance",
      Seq("partNumber" -> "2", "uploadId" -> "xyz.ABC-1"),
      config()
    )
  }
}
