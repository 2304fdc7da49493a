package io.sparklance.format.blob

import io.sparklance.storage.OutputSink

/**
 * Creates the sidecar files of one data file: sidecar `blobId` is the file
 * [[BlobPaths.sidecar]] names beside the data file. Implemented by the caller that knows the
 * storage (the Spark task writes through Hadoop).
 */
trait BlobSidecars {
  def create(blobId: Int): OutputSink

  /**
   * Whether blobs that leave the data file are table-managed objects (a dataset whose schema
   * metadata says `lance.blob.managed`): each pack and each dedicated blob is then a new
   * object [[createManaged]] makes under the dataset's `_blobs/`, referenced by its path.
   */
  def managed: Boolean = false

  /** A new managed object: its path relative to the dataset root, and where to write it. */
  def createManaged(): (String, OutputSink) =
    throw new IllegalStateException("this file writer has no managed blob storage")

  /** How values given as external URIs are stored (see [[ExternalBlobs]]). */
  def externals: ExternalBlobs = ExternalBlobs.Refused

  /**
   * The bytes `[position, +size)` of the object at `uri` (`size` -1: to its end), for
   * `external_blob_mode=ingest`.
   */
  def readExternal(uri: String, position: Long, size: Long): Array[Byte] =
    throw new IllegalStateException("this file writer cannot read external blobs")
}

object BlobSidecars {

  /** For writers that must not produce sidecars (2.0/2.1 files, tests of inline blobs). */
  val None: BlobSidecars = new BlobSidecars {
    def create(blobId: Int): OutputSink =
      throw new IllegalStateException(
        s"blob sidecar $blobId requested but this file writer has no sidecar storage"
      )
  }
}
