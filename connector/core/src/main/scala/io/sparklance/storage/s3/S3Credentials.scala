package io.sparklance.storage.s3

import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.nio.charset.StandardCharsets.UTF_8
import java.time.{Duration, Instant}

import com.fasterxml.jackson.databind.ObjectMapper
import org.slf4j.LoggerFactory

/**
 * Where requests get their credentials, in the AWS SDKs' order: static keys (options, S3A
 * settings, environment — see [[S3Config]]), then a web identity token (`AWS_ROLE_ARN` +
 * `AWS_WEB_IDENTITY_TOKEN_FILE`, as on EKS), then the ECS container endpoint, then the EC2
 * instance profile (IMDSv2). Temporary credentials are refreshed five minutes before they
 * expire. None of them: requests go unsigned (public buckets).
 */
final class S3Credentials(config: S3Config, env: String => Option[String]) {
  import S3Credentials._

  private var cached: Option[AwsCredentials] = None
  private var resolved = false

  def get: Option[AwsCredentials] = synchronized {
    val stale = cached.flatMap(_.expires).exists(_.minusSeconds(300).isBefore(Instant.now()))
    if (!resolved || stale) {
      cached = resolve()
      resolved = true
    }
    cached
  }

  private def setting(conf: Option[String], envName: String): Option[String] =
    conf.orElse(env(envName)).filter(_.nonEmpty)

  private def resolve(): Option[AwsCredentials] = {
    config.credentials match {
      case Some((a, s)) => return Some(AwsCredentials(a, s, config.sessionToken))
      case None =>
    }
    val tokenFile = setting(config.webIdentityTokenFile, "AWS_WEB_IDENTITY_TOKEN_FILE")
    val roleArn = setting(config.roleArn, "AWS_ROLE_ARN")
    if (tokenFile.isDefined && roleArn.isDefined)
      return Some(webIdentity(tokenFile.get, roleArn.get))
    val relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").filter(_.nonEmpty)
    val full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI").filter(_.nonEmpty)
    if (relative.isDefined || full.isDefined) {
      val uri = relative.map("http://169.254.170.2" + _).getOrElse(full.get)
      val auth = env("AWS_CONTAINER_AUTHORIZATION_TOKEN").filter(_.nonEmpty).toSeq
        .map("Authorization" -> _)
      return Some(fromJson(send("GET", uri, auth, 5), "the ECS container credentials endpoint"))
    }
    if (!env("AWS_EC2_METADATA_DISABLED").exists(_.equalsIgnoreCase("true"))) {
      val endpoint = setting(config.metadataEndpoint, "AWS_EC2_METADATA_SERVICE_ENDPOINT")
        .getOrElse("http://169.254.169.254").stripSuffix("/")
      instanceProfile(endpoint) match {
        case Some(c) => return Some(c)
        case None =>
      }
    }
    log.info("No AWS credentials found (options, S3A settings, environment, web identity, " +
      "container or instance profile); S3 requests go unsigned")
    None
  }

  private def webIdentity(tokenFile: String, roleArn: String): AwsCredentials = {
    val token =
      new String(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(tokenFile)), UTF_8).trim
    val sts = setting(config.stsEndpoint, "AWS_ENDPOINT_URL_STS")
      .orElse(config.endpoint)
      .getOrElse(s"https://sts.${config.region}.amazonaws.com").stripSuffix("/")
    val session = env("AWS_ROLE_SESSION_NAME").filter(_.nonEmpty)
      .getOrElse(s"spark-lance-${System.currentTimeMillis()}")
    val q = Seq(
      "Action" -> "AssumeRoleWithWebIdentity",
      "Version" -> "2011-06-15",
      "RoleArn" -> roleArn,
      "RoleSessionName" -> session,
      "WebIdentityToken" -> token
    )
      .map { case (k, v) => s"${SigV4.encode(k)}=${SigV4.encode(v)}" }.mkString("&")
    val body = send(
      "POST",
      s"$sts/",
      Seq("Content-Type" ->
        "application/x-www-form-urlencoded"),
      30,
      q
    )
    def tag(name: String): Option[String] =
      s"<$name>([^<]*)</$name>".r.findFirstMatchIn(body).map(_.group(1))
    (tag("AccessKeyId"), tag("SecretAccessKey")) match {
      case (Some(a), Some(s)) =>
        AwsCredentials(a, s, tag("SessionToken"), tag("Expiration").map(Instant.parse))
      case _ => throw new java.io.IOException(
          s"AssumeRoleWithWebIdentity for $roleArn returned no credentials"
        )
    }
  }

  /** IMDSv2: a session token, the instance's role, then its credentials. */
  private def instanceProfile(endpoint: String): Option[AwsCredentials] = {
    val token =
      try send(
          "PUT",
          s"$endpoint/latest/api/token",
          Seq("X-aws-ec2-metadata-token-ttl-seconds" -> "21600"),
          1
        )
      catch { case _: java.io.IOException => return None } // not on EC2
    val h = Seq("X-aws-ec2-metadata-token" -> token)
    val base = s"$endpoint/latest/meta-data/iam/security-credentials/"
    val role = send("GET", base, h, 2).linesIterator.map(_.trim).find(_.nonEmpty)
      .getOrElse(return None)
    Some(fromJson(send("GET", base + role, h, 2), s"the instance profile $role"))
  }

  private def fromJson(json: String, source: String): AwsCredentials = {
    val n = mapper.readTree(json)
    def text(k: String): Option[String] = Option(n.get(k)).map(_.asText()).filter(_.nonEmpty)
    (text("AccessKeyId"), text("SecretAccessKey")) match {
      case (Some(a), Some(s)) =>
        AwsCredentials(a, s, text("Token"), text("Expiration").map(Instant.parse))
      case _ => throw new java.io.IOException(s"$source returned no credentials")
    }
  }
}

object S3Credentials {
  private val log = LoggerFactory.getLogger(classOf[S3Credentials])
  private val mapper = new ObjectMapper()
  private lazy val http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
    .connectTimeout(Duration.ofSeconds(1)).build()

  /** The body of a 200 answer; anything else is an IOException naming the URL (no secrets). */
  private def send(
      method: String,
      url: String,
      headers: Seq[(String, String)],
      timeoutSeconds: Int,
      body: String = null
  ): String = {
    val b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(timeoutSeconds))
      .method(
        method,
        if (body == null) HttpRequest.BodyPublishers.noBody()
        else HttpRequest.BodyPublishers.ofString(body)
      )
    headers.foreach { case (k, v) => b.header(k, v) }
    val r =
      try http.send(b.build(), HttpResponse.BodyHandlers.ofString())
      catch {
        case e: InterruptedException =>
          Thread.currentThread().interrupt()
          throw new java.io.InterruptedIOException(s"interrupted getting credentials from $url")
      }
    if (r.statusCode() != 200)
      throw new java.io.IOException(s"$method $url for AWS credentials: HTTP ${r.statusCode()}")
    r.body()
  }
}
