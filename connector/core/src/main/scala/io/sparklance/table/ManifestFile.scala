package io.sparklance.table

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.LanceErrors
import io.sparklance.storage.FileIO
import io.sparklance.proto.TableProtos

/**
 * The framing of a manifest file. A manifest is not a bare protobuf:
 * {{{
 *   [optional sections, each u32 LE length + protobuf]   (index section, inline transaction)
 *   u32 LE length | lance.table.Manifest protobuf
 *   i64 LE position of that u32 | i16 major | i16 minor | "LANC"
 * }}}
 * The manifest message ends exactly 16 bytes before end of file.
 */
object ManifestFile {
  val Magic: Array[Byte] = "LANC".getBytes("US-ASCII")
  val FooterLength = 16

  /** Reading this much of the tail usually gets the whole manifest in one request. */
  private val TailBytes = 64 * 1024

  /**
   * A decoded manifest plus what is needed to rewrite it without losing anything, and the
   * bytes of its index section when reading the manifest read them too (see [[indices]]).
   */
  final case class Decoded(
      path: String,
      manifest: TableProtos.Manifest,
      fileSize: Long,
      indexSection: Option[Array[Byte]] = None
  )

  def read(io: FileIO, path: String): Decoded = {
    val in =
      try io.open(path)
      catch {
        case e: java.io.FileNotFoundException =>
          throw LanceErrors.corruptFile(path, "manifest file is missing", e)
      }
    try {
      val size = in.length
      if (size < FooterLength + 4)
        throw LanceErrors.corruptFile(path, s"manifest file is only $size bytes")
      val tailLen = math.min(size, TailBytes.toLong).toInt
      val tailStart = size - tailLen
      var tail = in.read(tailStart, tailLen)
      val footer =
        ByteBuffer.wrap(tail, tailLen - FooterLength, FooterLength).order(ByteOrder.LITTLE_ENDIAN)
      val pos = footer.getLong()
      if (!java.util.Arrays.equals(java.util.Arrays.copyOfRange(tail, tailLen - 4, tailLen), Magic))
        throw LanceErrors.corruptFile(path, "missing LANC magic at end of manifest")
      val msgEnd = size - FooterLength
      if (pos < 0 || pos + 4 > msgEnd)
        throw LanceErrors.corruptFile(
          path,
          s"manifest position $pos is outside the file (size $size)"
        )
      // Widen the tail when the manifest starts before it.
      var base = tailStart
      if (pos < base) {
        tail = in.read(pos, (size - pos).toInt)
        base = pos
      }
      val lenPrefix = ByteBuffer.wrap(tail, (pos - base).toInt, 4).order(
        ByteOrder.LITTLE_ENDIAN
      ).getInt() & 0xffffffffL
      val msgLen = msgEnd - (pos + 4)
      if (lenPrefix != msgLen)
        throw LanceErrors.corruptFile(
          path,
          s"manifest length prefix $lenPrefix does not match the $msgLen bytes before the footer"
        )
      val manifest =
        try TableProtos.Manifest.parseFrom(ByteBuffer.wrap(
            tail,
            (pos + 4 - base).toInt,
            msgLen.toInt
          ))
        catch {
          case e: com.google.protobuf.InvalidProtocolBufferException =>
            throw LanceErrors.corruptFile(
              path,
              s"manifest protobuf does not decode: ${e.getMessage}",
              e
            )
        }
      Decoded(path, manifest, size, sectionIn(tail, base, msgEnd, manifest))
    } finally in.close()
  }

  /**
   * The bytes of `manifest`'s index section when they lie in `bytes` (the file from `base`;
   * the manifest message ends at `end`): pylance writes the section just before the message,
   * so the tail read for the manifest usually holds it.
   */
  private def sectionIn(
      bytes: Array[Byte],
      base: Long,
      end: Long,
      manifest: TableProtos.Manifest
  ): Option[Array[Byte]] =
    if (!manifest.hasIndexSection) None
    else {
      val pos = manifest.getIndexSection
      if (pos < base || pos + 4 > end) None
      else {
        val at = (pos - base).toInt
        val len =
          ByteBuffer.wrap(bytes, at, 4).order(ByteOrder.LITTLE_ENDIAN).getInt() & 0xffffffffL
        if (pos + 4 + len > end) None
        else Some(java.util.Arrays.copyOfRange(bytes, at + 4, at + 4 + len.toInt))
      }
    }

  /** The indices version `s` records (its manifest's index section); none without one. */
  def indices(io: FileIO, s: Snapshot): Seq[TableProtos.IndexMetadata] =
    if (!s.manifest.hasIndexSection) Nil
    else s.indices {
      import scala.jdk.CollectionConverters._
      try TableProtos.IndexSection.parseFrom(indexSection(io, s)).getIndicesList.asScala.toSeq
      catch {
        case e: com.google.protobuf.InvalidProtocolBufferException =>
          throw LanceErrors.corruptFile(
            s.manifestPath,
            s"index section does not decode: ${e.getMessage}",
            e
          )
      }
    }

  /**
   * The bytes of the index section of `s`'s manifest (it has one): those read with the
   * manifest, else read now.
   */
  def indexSection(io: FileIO, s: Snapshot): Array[Byte] =
    s.indexSectionBytes.getOrElse(readSection(io, s.manifestPath, s.manifest.getIndexSection))

  /** An index's UUID as text (its 16 bytes as two big-endian halves, as pylance prints it). */
  def uuidText(u: TableProtos.UUID): String = {
    val bb = ByteBuffer.wrap(u.getUuid.toByteArray)
    new java.util.UUID(bb.getLong, bb.getLong).toString
  }

  /** Reads a length-prefixed protobuf section (index section, inline transaction) at `pos`. */
  def readSection(io: FileIO, path: String, pos: Long): Array[Byte] = {
    val len = ByteBuffer.wrap(io.readRange(path, pos, 4)).order(
      ByteOrder.LITTLE_ENDIAN
    ).getInt() & 0xffffffffL
    if (len > Int.MaxValue)
      throw LanceErrors.corruptFile(path, s"section at $pos claims $len bytes")
    io.readRange(path, pos + 4, len.toInt)
  }

  /** Frames `manifest` verbatim (section positions untouched, no sections written). */
  def encode(manifest: TableProtos.Manifest): Array[Byte] = frame(manifest.toByteArray, Nil)

  /**
   * Frames a manifest as a complete manifest file: the index section first (u32 length +
   * `IndexSection` bytes, kept verbatim) when there is one, with `index_section` set to its
   * position, then the message and footer.
   */
  def encode(
      manifest: TableProtos.Manifest.Builder,
      indexSection: Option[Array[Byte]]
  ): Array[Byte] =
    encode(manifest, indexSection, None)

  /**
   * As above, plus the transaction embedded after the index section (`transaction_section`,
   * a u32-length-prefixed `Transaction`), which pylance 14 writes beside the `.txn` file.
   */
  def encode(
      manifest: TableProtos.Manifest.Builder,
      indexSection: Option[Array[Byte]],
      transaction: Option[Array[Byte]]
  ): Array[Byte] = {
    indexSection match {
      case Some(_) => manifest.setIndexSection(0L)
      case None => manifest.clearIndexSection()
    }
    transaction match {
      case Some(_) => manifest.setTransactionSection(indexSection.map(_.length + 4L).getOrElse(0L))
      case None => manifest.clearTransactionSection()
    }
    frame(manifest.build().toByteArray, indexSection.toSeq ++ transaction.toSeq)
  }

  private def frame(body: Array[Byte], sections: Seq[Array[Byte]]): Array[Byte] = {
    val before = sections.map(_.length + 4).sum
    val buf =
      ByteBuffer.allocate(before + 4 + body.length + FooterLength).order(ByteOrder.LITTLE_ENDIAN)
    sections.foreach { s => buf.putInt(s.length); buf.put(s) }
    val pos = buf.position().toLong
    buf.putInt(body.length)
    buf.put(body)
    buf.putLong(pos)
    buf.putShort(0.toShort)
    buf.putShort(2.toShort)
    buf.put(Magic)
    buf.array()
  }
}
