package io.sparklance.storage.s3

import org.apache.hadoop.conf.Configuration

import io.sparklance.LanceErrors

/**
 * How to reach S3: endpoint, region, credentials, addressing, retries.
 *
 * Settings are looked up, first found wins, under pylance's `storage_options` names
 * (`aws_access_key_id`, `aws_secret_access_key`, `aws_session_token`, `aws_region`,
 * `aws_endpoint`, `allow_http`, `virtual_hosted_style_request`; requests are path-style
 * unless the last is true, as pylance's), then Hadoop's S3A names
 * (`fs.s3a.access.key`, …), then the AWS environment variables; without static keys,
 * [[S3Credentials]] looks further (web identity, container, instance profile). Reader and
 * writer options
 * reach the Hadoop configuration Spark builds for a scan or a write, so all three places are
 * one lookup here. `toString` never shows a secret.
 */
final case class S3Config(
    endpoint: Option[String],
    region: String,
    accessKey: Option[String],
    secretKey: Option[String],
    sessionToken: Option[String],
    pathStyle: Boolean,
    allowHttp: Boolean,
    maxRetries: Int,
    partSize: Int,
    requestTimeoutMillis: Long = 120000L,
    webIdentityTokenFile: Option[String] = None,
    roleArn: Option[String] = None,
    stsEndpoint: Option[String] = None,
    metadataEndpoint: Option[String] = None,
    ddbTableName: Option[String] = None,
    dynamodbEndpoint: Option[String] = None
) {

  def credentials: Option[(String, String)] =
    for (a <- accessKey; s <- secretKey) yield (a, s)

  override def toString: String =
    s"S3Config(endpoint=${endpoint.getOrElse("aws")}, region=$region, " +
      s"credentials=${if (credentials.isDefined) "set" else "none"}, pathStyle=$pathStyle)"
}

object S3Config {

  /** Smallest part S3 accepts in a multipart upload (all but the last). */
  val MinPartSize: Int = 5 * 1024 * 1024

  private def keys(pylance: String, s3a: String*): Seq[String] = {
    val upper = pylance.toUpperCase(java.util.Locale.ROOT)
    Seq(pylance, upper, s"storage_options.$pylance") ++ s3a
  }

  private val AccessKey = keys("aws_access_key_id", "fs.s3a.access.key")
  private val SecretKey = keys("aws_secret_access_key", "fs.s3a.secret.key")
  private val SessionToken = keys("aws_session_token", "fs.s3a.session.token")
  private val Region = keys("aws_region", "fs.s3a.endpoint.region") ++ Seq("region")
  private val Endpoint = keys("aws_endpoint", "fs.s3a.endpoint") ++ Seq("endpoint")
  private val AllowHttp = keys("allow_http")
  private val VirtualHosted = keys("virtual_hosted_style_request")
  private val TokenFile = keys("aws_web_identity_token_file")
  private val RoleArn = keys("aws_role_arn")
  private val StsEndpoint = keys("aws_sts_endpoint")
  private val MetadataEndpoint = keys("aws_metadata_endpoint")
  private val Timeout = keys("timeout")

  /** `s3+ddb://` commits: the DynamoDB table (pylance's URI query `ddbTableName`). */
  private val DdbTable = Seq("ddbTableName", "ddb_table_name")

  /** pylance reads the DynamoDB endpoint from the environment variable DYNAMODB_ENDPOINT. */
  private val DdbEndpoint = keys("dynamodb_endpoint")
  private val Retries = Seq("s3_max_retries")
  private val PartSize = Seq("s3_part_size")

  private val Settings = Seq(
    AccessKey,
    SecretKey,
    SessionToken,
    Region,
    Endpoint,
    AllowHttp,
    VirtualHosted,
    TokenFile,
    RoleArn,
    StsEndpoint,
    MetadataEndpoint,
    Timeout,
    DdbTable,
    DdbEndpoint,
    Retries,
    PartSize
  )

  /** The option names these settings are read from, as readers and writers take them. */
  val OptionNames: Seq[String] = Settings.flatten.distinct

  /** Each setting's own name (pylance's `storage_options` name): what the README lists. */
  val PylanceNames: Seq[String] = Settings.map(_.head)

  /** The settings in `conf` (with reader/writer options already in it) and the environment. */
  def from(
      conf: Configuration,
      env: String => Option[String] = k => Option(System.getenv(k))
  ): S3Config = {
    def find(names: Seq[String]): Option[(String, String)] =
      names.iterator.flatMap(n => Option(conf.get(n)).filter(_.nonEmpty).map(n -> _)).toSeq
        .headOption
        .orElse(names.iterator.filter(n => n.toUpperCase(java.util.Locale.ROOT) == n)
          .flatMap(n => env(n).filter(_.nonEmpty).map(n -> _)).toSeq.headOption)
    def get(names: Seq[String]): Option[String] = find(names).map(_._2)
    def bool(names: Seq[String]): Option[Boolean] = find(names).map { case (n, v) =>
      v.trim.toLowerCase(java.util.Locale.ROOT) match {
        case "true" | "1" | "yes" => true
        case "false" | "0" | "no" => false
        case _ => throw LanceErrors.invalidOption(n, v, "expected true or false")
      }
    }
    def int(names: Seq[String], default: Int, min: Int): Int = find(names) match {
      case None => default
      case Some((n, v)) =>
        val parsed =
          try parseSize(v)
          catch {
            case _: NumberFormatException =>
              throw LanceErrors.invalidOption(n, v, "expected a whole number")
          }
        if (parsed < min) throw LanceErrors.invalidOption(n, v, s"must be at least $min")
        parsed
    }
    val endpoint = get(Endpoint).map(_.trim.stripSuffix("/")).map { e =>
      if (e.contains("://")) e else s"https://$e"
    }
    val allowHttp = bool(AllowHttp).getOrElse(false)
    endpoint.filter(_.startsWith("http://")).foreach { e =>
      if (!allowHttp && bool(Seq("fs.s3a.connection.ssl.enabled")).forall(identity))
        throw LanceErrors.invalidOption(
          "aws_endpoint",
          e,
          "the endpoint is plain http; set allow_http=true to use it"
        )
    }
    // Path-style addressing unless asked otherwise, as pylance (object_store) addresses S3.
    val pathStyle = !bool(VirtualHosted).getOrElse(false)
    val region = get(Region).orElse(env("AWS_DEFAULT_REGION").filter(_.nonEmpty))
      .getOrElse("us-east-1")
    S3Config(
      endpoint,
      region,
      get(AccessKey),
      get(SecretKey),
      get(SessionToken),
      pathStyle,
      allowHttp,
      int(Retries, 10, 0),
      int(PartSize, 16 * 1024 * 1024, MinPartSize),
      find(Timeout).map { case (n, v) => parseMillis(n, v) }.getOrElse(120000L),
      get(TokenFile),
      get(RoleArn),
      get(StsEndpoint),
      get(MetadataEndpoint),
      get(DdbTable),
      get(DdbEndpoint).map(_.trim.stripSuffix("/"))
    )
  }

  /** pylance's durations: "30s", "500ms", "2m", "1h", or a plain number of seconds. */
  private def parseMillis(name: String, v: String): Long = {
    val t = v.trim.toLowerCase(java.util.Locale.ROOT)
    val (num, unit) =
      if (t.endsWith("ms")) (t.dropRight(2), 1L)
      else if (t.endsWith("s")) (t.dropRight(1), 1000L)
      else if (t.endsWith("m")) (t.dropRight(1), 60000L)
      else if (t.endsWith("h")) (t.dropRight(1), 3600000L)
      else (t, 1000L)
    val ms =
      try { (num.trim.toDouble * unit).toLong }
      catch {
        case _: NumberFormatException =>
          throw LanceErrors.invalidOption(name, v, "expected a duration such as 30s or 500ms")
      }
    if (ms <= 0) throw LanceErrors.invalidOption(name, v, "must be positive")
    ms
  }

  /** "64M", "16m", "1G", or a plain number of bytes. */
  private def parseSize(v: String): Int = {
    val t = v.trim.toUpperCase(java.util.Locale.ROOT)
    val (num, mult) = t.lastOption match {
      case Some('K') => (t.dropRight(1), 1024L)
      case Some('M') => (t.dropRight(1), 1024L * 1024)
      case Some('G') => (t.dropRight(1), 1024L * 1024 * 1024)
      case _ => (t, 1L)
    }
    val n = num.trim.toLong * mult
    if (n > Int.MaxValue) throw new NumberFormatException(v)
    n.toInt
  }
}
