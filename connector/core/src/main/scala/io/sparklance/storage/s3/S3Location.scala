package io.sparklance.storage.s3

import io.sparklance.LanceErrors

/** A path on S3: `scheme://bucket/key`, the scheme kept for the paths derived from it. */
final case class S3Location(scheme: String, bucket: String, key: String) {
  def url: String = s"$scheme://$bucket/$key"

  /** The prefix of the keys under this path taken as a directory. */
  def dirPrefix: String = if (key.isEmpty) "" else key.stripSuffix("/") + "/"

  def child(name: String): String = s"$scheme://$bucket/$dirPrefix$name"
}

object S3Location {
  def apply(path: String): S3Location = {
    val i = path.indexOf("://")
    if (i <= 0) throw LanceErrors.invalidOption("path", path, "not an s3:// URI")
    val scheme = path.substring(0, i)
    val rest = path.substring(i + 3)
    val slash = rest.indexOf('/')
    val (bucket, key) = if (slash < 0) (rest, "")
    else (rest.substring(0, slash), rest.substring(slash + 1).replaceAll("/{2,}", "/"))
    if (bucket.isEmpty) throw LanceErrors.invalidOption("path", path, "the URI names no bucket")
    S3Location(scheme, bucket, key)
  }
}
