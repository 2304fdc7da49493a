package io.sparklance.format.blob

import io.sparklance.LanceErrors
import io.sparklance.format.LanceField
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

object BlobSidecars {

  /** For writers that must not produce sidecars (2.0/2.1 files, tests of inline blobs). */
  val None: BlobSidecars = new BlobSidecars {
    def create(blobId: Int): OutputSink =
      throw new IllegalStateException(
        s"blob sidecar $blobId requested but this file writer has no sidecar storage"
      )
  }
}

/**
 * How blob v2 values of one column are placed (pylance 14.0.2 `BlobPreprocessor`), from the
 * field's metadata: a value longer than `dedicated` bytes gets a sidecar file of its own, one
 * longer than `inline` goes to the shared packed sidecar (a new pack starts when the current
 * one would exceed `packFile` bytes), anything else (empty values included) stays in the data
 * file.
 */
final case class BlobThresholds(inline: Long, dedicated: Long, packFile: Long)

object BlobThresholds {
  val InlineKey = "lance-encoding:blob-inline-size-threshold"
  val DedicatedKey = "lance-encoding:blob-dedicated-size-threshold"
  val PackFileKey = "lance-encoding:blob-pack-file-size-threshold"
  val Keys: Seq[String] = Seq(InlineKey, DedicatedKey, PackFileKey)

  val DefaultInline: Long = 64L * 1024
  val DefaultDedicated: Long = 4L * 1024 * 1024
  val DefaultPackFile: Long = 1024L * 1024 * 1024

  /** The thresholds of blob field `f`; a bad value fails naming the column and key, as pylance refuses it. */
  def of(f: LanceField): BlobThresholds = BlobThresholds(
    parse(f, InlineKey, DefaultInline, allowZero = true),
    parse(f, DedicatedKey, DefaultDedicated, allowZero = false),
    parse(f, PackFileKey, DefaultPackFile, allowZero = false)
  )

  private def parse(f: LanceField, key: String, default: Long, allowZero: Boolean): Long =
    f.metadataString(key) match {
      case scala.None => default
      case Some(s) =>
        val v =
          try s.trim.toLong
          catch { case _: NumberFormatException => -1L }
        if (v < 0 || (!allowZero && v == 0))
          throw LanceErrors.unsupported(
            s"Column '${f.name}': blob threshold metadata $key='$s' must be a " +
              (if (allowZero) "non-negative" else "positive") + " integer"
          )
        v
    }
}

/**
 * Where the blob v2 bytes of one data file go outside it: the packed sidecar being filled and
 * the dedicated sidecars, with their ids. Ids count from 1 per data file, shared by packed and
 * dedicated sidecars in the order they are started, and one pack is shared by every blob
 * column of the file, as pylance's writer numbers them, so the same rows give the same files.
 *
 * For managed blobs ([[BlobSidecars.managed]]) the packs and dedicated blobs are objects under
 * `_blobs/` instead, as pylance 14.0.2 writes them: id 0, and [[lastUri]] names the object the
 * last value went to.
 */
final class BlobSidecarWriter(sidecars: BlobSidecars) extends AutoCloseable {
  private var nextId = 1L
  private var pack: OutputSink = _
  private var packId = 0
  private var packUri: String = _

  /** The managed object the last packed or dedicated value was written to (null if not managed). */
  var lastUri: String = _

  def managed: Boolean = sidecars.managed
  def externals: ExternalBlobs = sidecars.externals
  def readExternal(uri: String, position: Long, size: Long): Array[Byte] =
    sidecars.readExternal(uri, position, size)
  private var packSize = 0L
  private var packLimit = -1L

  private def allocate(): Int = {
    if (nextId > 0xffffffffL)
      throw LanceErrors.unsupported("a data file needs more than 2^32 - 1 blob sidecar files")
    val id =
      nextId.toInt // u32 on disk; ids above 2^31 wrap to negative Ints and are written back unsigned
    nextId += 1
    id
  }

  /**
   * Appends `data[off, +len)` to the current pack (starting a new one when it would pass
   * `limit`, or when the limit differs from the current pack's); returns (blob id, offset).
   */
  def writePacked(data: Array[Byte], off: Int, len: Int, limit: Long): (Int, Long) = {
    if (pack == null || packLimit != limit || packSize + len > limit) {
      closePack()
      if (managed) {
        val (uri, sink) = sidecars.createManaged()
        packId = 0; packUri = uri; pack = sink
      } else {
        packId = allocate()
        pack = sidecars.create(packId)
      }
      packSize = 0
      packLimit = limit
    }
    lastUri = packUri
    val at = packSize
    pack.write(data, off, len)
    packSize += len
    (packId, at)
  }

  /** Writes `data[off, +len)` as a sidecar of its own; returns its blob id. */
  def writeDedicated(data: Array[Byte], off: Int, len: Int): Int = {
    val (id, out) =
      if (managed) { val (uri, sink) = sidecars.createManaged(); lastUri = uri; (0, sink) }
      else { val id = allocate(); (id, sidecars.create(id)) }
    try out.write(data, off, len)
    finally out.close()
    id
  }

  private def closePack(): Unit = if (pack != null) { val p = pack; pack = null; p.close() }

  /** Closes the open pack; call once the data file is finished. */
  override def close(): Unit = closePack()
}
