package io.sparklance.storage.s3

import java.time.Instant

/** One set of AWS credentials, and until when it holds (None: static). */
final case class AwsCredentials(
    accessKey: String,
    secretKey: String,
    token: Option[String],
    expires: Option[Instant] = None
) {
  override def toString: String = s"AwsCredentials(expires=${expires.getOrElse("never")})"
}
