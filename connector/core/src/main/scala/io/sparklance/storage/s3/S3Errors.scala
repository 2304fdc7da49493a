package io.sparklance.storage.s3

import java.io.{FileNotFoundException, IOException}

/** S3 error responses as the exceptions the storage layer's callers expect. */
object S3Errors {

  /** The `<Code>` of an S3 error body, if there is one. */
  def code(r: S3Response): Option[String] =
    if (r.body.isEmpty) None
    else "<Code>([^<]*)</Code>".r.findFirstMatchIn(r.text).map(_.group(1))

  /** A failed call on `url`: not found, access denied, or any other status. */
  def failure(method: String, url: String, r: S3Response): IOException = {
    val detail = code(r).map(c => s" $c").getOrElse("") +
      "<Message>([^<]*)</Message>".r.findFirstMatchIn(r.text).map(m => s": ${m.group(1)}")
        .getOrElse("")
    r.status match {
      case 404 => new FileNotFoundException(s"$url does not exist (S3 $method: HTTP 404$detail)")
      case 403 => new java.nio.file.AccessDeniedException(
          url,
          null,
          s"S3 $method refused (HTTP 403$detail); check the credentials " +
            "(aws_access_key_id / aws_secret_access_key or fs.s3a.access.key / fs.s3a.secret.key)"
        )
      case s => new IOException(s"S3 $method $url failed: HTTP $s$detail")
    }
  }
}
