package io.sparklance.format.blob

/** File names of blob sidecars, as `lance_core::utils::blob::blob_path` forms them. */
object BlobPaths {

  /**
   * The sidecar file `blobId` of data file `dataFilePath`: in a directory named after the data
   * file (its name without `.lance`) beside it, called the 32 binary digits of `blobId` with its
   * bits reversed, plus `.blob` (blob 1 is `1000…0.blob`, blob 2 `0100…0.blob`).
   */
  def sidecar(dataFilePath: String, blobId: Int): String = {
    val slash = dataFilePath.lastIndexOf('/')
    val dir = if (slash < 0) "" else dataFilePath.substring(0, slash + 1)
    val name = dataFilePath.substring(slash + 1)
    val key = if (name.endsWith(".lance")) name.dropRight(".lance".length) else name
    val bits = Integer.toBinaryString(Integer.reverse(blobId))
    val padded = "0" * (32 - bits.length) + bits
    s"$dir$key/$padded.blob"
  }

  /**
   * The dataset-relative path of a new managed blob object of the write job with `token` (8 hex
   * digits): `_blobs/<uuid>.blob` as pylance names them, the UUID's first group the token, so a
   * failed job finds the objects its killed tasks left.
   */
  def newManaged(token: String): String =
    s"_blobs/${token.toLowerCase}${java.util.UUID.randomUUID().toString.substring(8)}.blob"

  /** Whether `name` (a file name under `_blobs/`) is a managed object of job `token`. */
  def isManagedOfJob(name: String, token: String): Boolean =
    name.length == 36 + ".blob".length && name.endsWith(".blob") &&
      name.startsWith(token.toLowerCase + "-")
}
