package io.sparklance.format.blob

import io.sparklance.LanceErrors
import io.sparklance.storage.OutputSink

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
