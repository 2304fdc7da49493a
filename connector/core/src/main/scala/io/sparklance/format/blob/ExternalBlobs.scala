package io.sparklance.format.blob

import io.sparklance.LanceErrors

/**
 * How blob v2 values given as a URI (the `uri` of a `{data, uri, position, size}` value) are
 * written, as pylance 14.0.2's `external_blob_mode` and `allow_external_blob_outside_bases`
 * decide: referenced (an External descriptor) or ingested (their bytes read and stored like
 * any value). A reference under one of the dataset's non-root base paths is stored relative to
 * it, with the base's id as blob id; any other needs `allowOutsideBases` and an absolute URI.
 */
final case class ExternalBlobs(
    bases: Seq[(Int, String)],
    allowOutsideBases: Boolean,
    ingest: Boolean,
    refusal: Option[String] = None
) {

  /** (blob id, blob_uri) of a reference to `uri` from column `column`. */
  def reference(uri: String, column: String): (Int, String) = {
    refusal.foreach(why => throw LanceErrors.unsupported(s"Column '$column': $why"))
    val norm = uri.stripSuffix("/")
    bases.iterator.map { case (id, base) => (id, base.stripSuffix("/") + "/") }
      .find { case (_, prefix) => norm.startsWith(prefix) }
      .map { case (id, prefix) => (id, norm.substring(prefix.length)) }
      .getOrElse {
        if (!allowOutsideBases)
          throw LanceErrors.unsupported(s"Column '$column': external blob URI '$uri' is " +
            "outside the dataset's registered external bases; set the write option " +
            "allow_external_blob_outside_bases=true to store it as an absolute URI, or " +
            "external_blob_mode=ingest to store its bytes")
        if (!ExternalBlobs.isAbsolute(uri))
          throw LanceErrors.unsupported(s"Column '$column': external blob URI '$uri' is not an " +
            "absolute URI (scheme://...)")
        (0, uri)
      }
  }
}
object ExternalBlobs {

  /** For writers that take no external URIs (tests, blob v1). */
  val Refused: ExternalBlobs = ExternalBlobs(
    Nil,
    allowOutsideBases = false,
    ingest = false,
    Some("external blob URIs cannot be written here")
  )

  /** Whether `uri` names its scheme (`s3://b/k`, `file:///p`): pylance refuses bare paths. */
  def isAbsolute(uri: String): Boolean = {
    val colon = uri.indexOf("://")
    colon > 0 && uri.substring(0, colon).forall(c =>
      c.isLetterOrDigit || c == '+' || c == '-' || c == '.'
    )
  }
}
