package io.sparklance.storage.s3

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceInvalidOptionException

/** Where S3 settings come from: pylance's names, then Hadoop's S3A names, then the environment. */
class S3ConfigSuite extends AnyFunSuite {
  private def conf(kv: (String, String)*): Configuration = {
    val c = new Configuration(false)
    kv.foreach { case (k, v) => c.set(k, v) }
    c
  }

  private val noEnv: String => Option[String] = _ => None

  test("pylance's storage_options names") {
    val c = S3Config.from(
      conf(
        "aws_access_key_id" -> "a",
        "aws_secret_access_key" -> "s",
        "aws_session_token" -> "t",
        "aws_region" -> "eu-west-1",
        "aws_endpoint" -> "http://localhost:9000/",
        "allow_http" -> "true"
      ),
      noEnv
    )
    assert(c.credentials.contains(("a", "s")) && c.sessionToken.contains("t"))
    assert(c.region == "eu-west-1" && c.endpoint.contains("http://localhost:9000"))
    assert(c.pathStyle)
  }

  test("pylance's names win over Hadoop's, Hadoop's over the environment") {
    val env = Map(
      "AWS_ACCESS_KEY_ID" -> "env",
      "AWS_SECRET_ACCESS_KEY" -> "envs",
      "AWS_DEFAULT_REGION" -> "ap-south-1"
    )
    val both = S3Config.from(
      conf(
        "aws_access_key_id" -> "py",
        "aws_secret_access_key" -> "pys",
        "fs.s3a.access.key" -> "h",
        "fs.s3a.secret.key" -> "hs"
      ),
      env.get
    )
    assert(both.credentials.contains(("py", "pys")))
    val hadoop = S3Config.from(
      conf(
        "fs.s3a.access.key" -> "h",
        "fs.s3a.secret.key" -> "hs",
        "fs.s3a.endpoint" -> "minio:9000",
        "fs.s3a.endpoint.region" -> "r1"
      ),
      env.get
    )
    assert(hadoop.credentials.contains(("h", "hs")))
    assert(hadoop.endpoint.contains("https://minio:9000") && hadoop.region == "r1")
    val environment = S3Config.from(conf(), env.get)
    assert(environment.credentials.contains(("env", "envs")))
    assert(environment.region == "ap-south-1" && environment.endpoint.isEmpty)
    assert(S3Config.from(conf(), noEnv).credentials.isEmpty)
  }

  test("a plain-http endpoint needs allow_http; bad values name the option") {
    val e = intercept[LanceInvalidOptionException](
      S3Config.from(conf("aws_endpoint" -> "http://localhost:9000"), noEnv)
    )
    assert(e.getMessage.contains("allow_http") && e.getMessage.contains("aws_endpoint"))
    val b = intercept[LanceInvalidOptionException](
      S3Config.from(conf("allow_http" -> "maybe"), noEnv)
    )
    assert(b.getMessage.contains("allow_http"))
    val p = intercept[LanceInvalidOptionException](
      S3Config.from(conf("s3_part_size" -> "1M"), noEnv)
    )
    assert(p.getMessage.contains("s3_part_size"))
    assert(S3Config.from(conf("s3_part_size" -> "8M"), noEnv).partSize == 8 * 1024 * 1024)
    assert(!S3Config.from(conf("virtual_hosted_style_request" -> "true"), noEnv).pathStyle)
    assert(S3Config.from(conf("timeout" -> "1500ms"), noEnv).requestTimeoutMillis == 1500)
    assert(S3Config.from(conf("timeout" -> "2m"), noEnv).requestTimeoutMillis == 120000)
    assert(intercept[LanceInvalidOptionException](
      S3Config.from(conf("timeout" -> "soon"), noEnv)
    ).getMessage.contains("timeout"))
  }

  test("secrets never show in toString") {
    val c = S3Config.from(
      conf(
        "aws_access_key_id" -> "AKIASECRETID",
        "aws_secret_access_key" -> "verysecret",
        "aws_session_token" -> "tok3n"
      ),
      noEnv
    )
    Seq("AKIASECRETID", "verysecret", "tok3n").foreach(s => assert(!c.toString.contains(s)))
  }
}
