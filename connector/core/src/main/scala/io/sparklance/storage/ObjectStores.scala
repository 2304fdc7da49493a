package io.sparklance.storage

import io.sparklance.storage.s3.S3FileIO

/**
 * Which stores a path names, where that changes what a commit may do: object stores have no
 * exclusive rename, and pylance writes no `latest_version_hint.json` on them.
 */
object ObjectStores {

  /**
   * Object stores reached through Hadoop file systems, whose rename is a copy (or not an
   * exclusive create): a commit by rename is not safe there.
   */
  val RenameIsCopySchemes: Set[String] =
    Set("gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "adl", "oss", "cosn", "obs", "s3n")

  /** The lower-case scheme of `path`; "file" for a plain local path. */
  def scheme(path: String): String = {
    val i = path.indexOf("://")
    if (i > 0) path.substring(0, i).toLowerCase(java.util.Locale.ROOT) else "file"
  }

  def isObjectStore(path: String): Boolean = {
    val s = scheme(path)
    S3FileIO.Schemes.contains(s) || RenameIsCopySchemes.contains(s)
  }
}
