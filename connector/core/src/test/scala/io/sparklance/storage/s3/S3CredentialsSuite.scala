package io.sparklance.storage.s3

import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets.UTF_8
import java.time.Instant
import java.util.concurrent.atomic.AtomicInteger

import com.sun.net.httpserver.{HttpExchange, HttpServer}
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.Pylance

/**
 * The credential chain: static keys first, then web identity (against moto's STS), the ECS
 * container endpoint and the EC2 instance profile (IMDSv2, against a stand-in server here),
 * with temporary credentials refreshed before they expire.
 */
class S3CredentialsSuite extends AnyFunSuite {
  private def config(
      endpoint: Option[String] = None,
      metadata: Option[String] = None,
      static: Option[(String, String)] = None,
      tokenFile: Option[String] = None,
      role: Option[String] = None
  ) =
    S3Config(
      endpoint,
      "us-east-1",
      static.map(_._1),
      static.map(_._2),
      None,
      pathStyle = true,
      allowHttp = true,
      maxRetries = 0,
      partSize = S3Config.MinPartSize,
      webIdentityTokenFile = tokenFile,
      roleArn = role,
      metadataEndpoint = metadata
    )

  private val noImds: String => Option[String] = {
    case "AWS_EC2_METADATA_DISABLED" => Some("true")
    case _ => None
  }

  /** A stand-in for IMDSv2 and the ECS endpoint; credentials expiring in `ttl` seconds. */
  private class MetadataServer(ttl: Long) extends AutoCloseable {
    val roleFetches = new AtomicInteger()
    private val server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0)
    private def reply(x: HttpExchange, status: Int, body: String): Unit = {
      val b = body.getBytes(UTF_8)
      x.sendResponseHeaders(status, if (b.isEmpty) -1 else b.length)
      if (b.nonEmpty) x.getResponseBody.write(b)
      x.close()
    }
    private def creds(n: Int) =
      s"""{"AccessKeyId":"AK$n","SecretAccessKey":"SK$n","Token":"T$n",""" +
        s""""Expiration":"${Instant.now().plusSeconds(ttl)}"}"""
    server.createContext(
      "/",
      (x: HttpExchange) => {
        val p = x.getRequestURI.getPath
        val token = Option(x.getRequestHeaders.getFirst("X-aws-ec2-metadata-token"))
        (x.getRequestMethod, p) match {
          case ("PUT", "/latest/api/token") => reply(x, 200, "tok")
          case ("GET", "/latest/meta-data/iam/security-credentials/") if token.contains("tok") =>
            reply(x, 200, "my-role\n")
          case ("GET", "/latest/meta-data/iam/security-credentials/my-role")
              if token.contains("tok") => reply(x, 200, creds(roleFetches.incrementAndGet()))
          case ("GET", "/ecs") if x.getRequestHeaders.getFirst("Authorization") == "ecs-auth" =>
            reply(x, 200, creds(100))
          case _ => reply(x, 401, "")
        }
      }
    )
    server.start()
    val url = s"http://127.0.0.1:${server.getAddress.getPort}"
    override def close(): Unit = server.stop(0)
  }

  test("static keys win; nothing anywhere means unsigned requests") {
    val c = new S3Credentials(config(static = Some(("a", "s"))), _ => None).get
    assert(c.contains(AwsCredentials("a", "s", None)))
    assert(new S3Credentials(config(), noImds).get.isEmpty)
  }

  test("the EC2 instance profile (IMDSv2), refreshed before it expires") {
    val imds = new MetadataServer(ttl = 3600)
    try {
      val chain = new S3Credentials(config(metadata = Some(imds.url)), _ => None)
      val c = chain.get.get
      assert(c.accessKey == "AK1" && c.secretKey == "SK1" && c.token.contains("T1"))
      assert(chain.get.get.accessKey == "AK1" && imds.roleFetches.get == 1) // cached
    } finally imds.close()
    val soon = new MetadataServer(ttl = 60) // inside the five-minute refresh window
    try {
      val chain = new S3Credentials(config(metadata = Some(soon.url)), _ => None)
      chain.get; chain.get
      assert(soon.roleFetches.get == 2)
      assert(!chain.get.get.toString.contains("SK"))
    } finally soon.close()
  }

  test("the ECS container endpoint, with its authorization token") {
    val ecs = new MetadataServer(ttl = 3600)
    try {
      val env = Map(
        "AWS_CONTAINER_CREDENTIALS_FULL_URI" -> s"${ecs.url}/ecs",
        "AWS_CONTAINER_AUTHORIZATION_TOKEN" -> "ecs-auth"
      )
      val c = new S3Credentials(config(), env.get).get.get
      assert(c.accessKey == "AK100" && c.token.contains("T100"))
    } finally ecs.close()
  }

  test("a web identity token exchanged at STS (moto)") {
    Pylance.require()
    val server = Pylance.call("s3_ops", "start")
    val tokenFile = java.nio.file.Files.createTempFile("web-identity", ".jwt")
    java.nio.file.Files.write(tokenFile, "header.payload.signature".getBytes(UTF_8))
    val c = new S3Credentials(
      config(
        endpoint = Some(server.get("direct").asText()),
        tokenFile = Some(tokenFile.toString),
        role = Some("arn:aws:iam::123456789012:role/spark-lance")
      ),
      noImds
    ).get.get
    assert(c.accessKey.nonEmpty && c.secretKey.nonEmpty && c.token.isDefined)
    assert(c.expires.isDefined)
  }
}
