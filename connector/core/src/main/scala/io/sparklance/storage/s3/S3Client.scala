package io.sparklance.storage.s3

import java.io.IOException
import java.net.URI
import java.net.http.{HttpClient, HttpRequest, HttpResponse}
import java.time.Duration
import java.util.concurrent.ThreadLocalRandom

import org.slf4j.LoggerFactory

/**
 * The S3 REST calls the storage layer needs, over the JDK's HTTP client: signed with SigV4
 * when credentials are set, retried with exponential backoff and jitter on connection errors,
 * throttling (429, 503 SlowDown) and server errors (500, 502, 504).
 */
final class S3Client(
    val config: S3Config,
    env: String => Option[String] = k => Option(System.getenv(k))
) {
  import S3Client._

  private val credentials = new S3Credentials(config, env)

  private val http = HttpClient.newBuilder()
    .version(HttpClient.Version.HTTP_1_1)
    .connectTimeout(Duration.ofSeconds(30))
    .followRedirects(HttpClient.Redirect.NEVER)
    .build()

  /** Scheme and authority requests go to, and the path prefix of a bucket. */
  private def target(bucket: String): (String, String) = config.endpoint match {
    case Some(e) if config.pathStyle => (e, s"/${SigV4.encode(bucket)}")
    case Some(e) =>
      val u = URI.create(e)
      (s"${u.getScheme}://$bucket.${u.getRawAuthority}", "")
    case None if config.pathStyle =>
      (s"https://s3.${config.region}.amazonaws.com", s"/${SigV4.encode(bucket)}")
    case None => (s"https://$bucket.s3.${config.region}.amazonaws.com", "")
  }

  /**
   * Sends one request and returns the response, retrying what is worth retrying.
   * `retryOn` statuses are returned to the caller without retry when not transient.
   */
  def call(
      method: String,
      bucket: String,
      key: String,
      query: Seq[(String, String)] = Nil,
      headers: Seq[(String, String)] = Nil,
      body: Array[Byte] = null
  ): S3Response = {
    val (base, bucketPath) = target(bucket)
    val path = bucketPath + "/" + SigV4.encode(key, keepSlash = true)
    val qs = query.map { case (k, v) => s"${SigV4.encode(k)}=${SigV4.encode(v)}" }.mkString("&")
    val uri = URI.create(base + path + (if (qs.isEmpty) "" else "?" + qs))
    var attempt = 0
    while (true) {
      val outcome =
        try Right(send(method, uri, path, query, headers, body))
        catch { case e: IOException => Left(e) }
      val transient = outcome match {
        case Left(_) => true
        case Right(r) => r.status == 429 || r.status == 500 || r.status == 502 ||
          r.status == 503 || r.status == 504
      }
      if (!transient || attempt >= config.maxRetries) outcome match {
        case Right(r) => return r
        case Left(e) => throw new IOException(
            s"S3 $method s3://$bucket/$key failed after ${attempt + 1} attempt(s): ${e.getMessage}",
            e
          )
      }
      attempt += 1
      val delay = backoffMillis(attempt)
      log.warn(s"S3 $method s3://$bucket/$key: ${describe(outcome)}; retry $attempt of " +
        s"${config.maxRetries} in $delay ms")
      try Thread.sleep(delay)
      catch {
        case e: InterruptedException =>
          Thread.currentThread().interrupt()
          throw new java.io.InterruptedIOException(s"interrupted retrying S3 $method $key")
      }
    }
    throw new IllegalStateException("unreachable")
  }

  private def send(
      method: String,
      uri: URI,
      path: String,
      query: Seq[(String, String)],
      headers: Seq[(String, String)],
      body: Array[Byte]
  ): S3Response = {
    val publisher =
      if (body == null) HttpRequest.BodyPublishers.noBody()
      else HttpRequest.BodyPublishers.ofByteArray(body)
    val b = HttpRequest.newBuilder(uri).timeout(Duration.ofMillis(config.requestTimeoutMillis))
      .method(method, publisher)
    headers.foreach { case (k, v) => b.header(k, v) }
    credentials.get.foreach(c =>
      SigV4.sign(method, uri.getRawAuthority, path, query, config.region, c).foreach {
        case (k, v) => b.header(k, v)
      }
    )
    val r =
      try http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray())
      catch {
        case e: InterruptedException =>
          Thread.currentThread().interrupt()
          throw new java.io.InterruptedIOException(s"interrupted in S3 $method $uri")
      }
    io.sparklance.storage.IoStats.request(if (method == "GET") r.body().length else 0)
    val hs = Map.newBuilder[String, String]
    r.headers().map().forEach((k, vs) =>
      if (!vs.isEmpty) hs += k.toLowerCase(java.util.Locale.ROOT) -> vs.get(0)
    )
    S3Response(r.statusCode(), hs.result(), r.body())
  }

  private def describe(o: Either[IOException, S3Response]): String = o match {
    case Left(e) => s"${e.getClass.getSimpleName}: ${e.getMessage}"
    case Right(r) => s"HTTP ${r.status} ${S3Errors.code(r).getOrElse("")}".trim
  }
}

object S3Client {
  private val log = LoggerFactory.getLogger(classOf[S3Client])

  /** 100 ms doubling per attempt up to 10 s, with full jitter on the upper half. */
  def backoffMillis(attempt: Int): Long = {
    val cap = math.min(10000L, 100L << math.min(attempt - 1, 20))
    cap / 2 + ThreadLocalRandom.current().nextLong(cap / 2 + 1)
  }
}
