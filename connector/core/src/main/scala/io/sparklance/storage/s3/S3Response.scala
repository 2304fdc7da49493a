package io.sparklance.storage.s3

/** One S3 response: status, headers (lower-case names) and body. */
final case class S3Response(status: Int, headers: Map[String, String], body: Array[Byte]) {
  def header(name: String): Option[String] = headers.get(name)
  def text: String = new String(body, java.nio.charset.StandardCharsets.UTF_8)
}
