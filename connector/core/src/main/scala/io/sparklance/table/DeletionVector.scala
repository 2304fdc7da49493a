package io.sparklance.table

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.arrow.memory.{ArrowBuf, BufferAllocator, RootAllocator}
import org.apache.arrow.vector.UInt4Vector
import org.apache.arrow.vector.IntVector
import org.apache.arrow.vector.compression.{
  AbstractCompressionCodec,
  CompressionCodec,
  CompressionUtil,
  NoCompressionCodec
}
import org.apache.arrow.vector.ipc.ArrowFileReader
import org.apache.arrow.vector.util.ByteArrayReadableSeekableByteChannel
import org.roaringbitmap.RoaringBitmap

import io.sparklance.{LanceErrors, LanceException}
import io.sparklance.format.FileMetadataCache
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.proto.TableProtos

/**
 * The deleted row offsets of one fragment. Lance stores them in `_deletions/` either as an
 * Arrow IPC file of `row_id: uint32` (small deletions; ZSTD-compressed body) or as a
 * portable 32-bit Roaring bitmap (5000 or more deleted rows).
 */
final class DeletionVector(val deleted: RoaringBitmap) extends FileMetadataCache.Entry {
  def cardinality: Long = deleted.getLongCardinality
  def contains(rowOffset: Int): Boolean = deleted.contains(rowOffset)
  def weight: Long = 256L + deleted.getLongSizeInBytes
}

object DeletionVector {
  val Empty = new DeletionVector(new RoaringBitmap())

  /** `_deletions/{fragment_id}-{read_version}-{id}.{arrow|bin}` under the dataset root. */
  def path(root: String, fragmentId: Long, file: TableProtos.DeletionFile): String = {
    val ext = file.getFileType match {
      case TableProtos.DeletionFile.DeletionFileType.ARROW_ARRAY => "arrow"
      case TableProtos.DeletionFile.DeletionFileType.BITMAP => "bin"
      case other =>
        throw LanceErrors.unsupported(s"Deletion file type $other of fragment $fragmentId in $root")
    }
    Paths.join(
      DatasetLayout.deletionsDir(root),
      s"$fragmentId-${file.getReadVersion}-${java.lang.Long.toUnsignedString(file.getId)}.$ext"
    )
  }

  /**
   * [[read]], once per JVM: the vector is kept in [[FileMetadataCache]] (deletion files carry
   * a random id in their name, so a path never names other rows), for readers that never
   * change it (scans). Whoever merges deletions into it reads its own copy with [[read]].
   */
  def readShared(io: FileIO, fragment: FragmentRef): DeletionVector =
    fragment.deletionPath match {
      case None => Empty
      case Some(p) => FileMetadataCache.shared.entryOf[DeletionVector](p) match {
          case Some(dv) => dv
          case None =>
            val dv = read(io, fragment)
            FileMetadataCache.shared.putEntry(p, dv)
            dv
        }
    }

  def read(io: FileIO, fragment: FragmentRef): DeletionVector = fragment.deletionPath match {
    case None => Empty
    case Some(p) =>
      val bytes =
        try io.readFully(p)
        catch {
          case e: java.io.FileNotFoundException =>
            throw LanceErrors.corruptFile(
              p,
              s"deletion file of fragment ${fragment.id} is missing",
              e
            )
        }
      val bitmap =
        try {
          if (fragment.deletionIsBitmap) readBitmap(bytes) else readArrow(bytes)
        } catch {
          case e: LanceException => throw e
          case e: Exception =>
            throw LanceErrors.corruptFile(p, s"deletion file does not decode: $e", e)
        }
      if (
        fragment.physicalRowsTrusted && bitmap.getLongCardinality > 0 && (bitmap.last() & 0xffffffffL) >= fragment.physicalRows
      )
        throw LanceErrors.corruptFile(
          p,
          s"deletes row ${bitmap.last() & 0xffffffffL} but fragment ${fragment.id} has ${fragment.physicalRows} rows"
        )
      new DeletionVector(bitmap)
  }

  private def readBitmap(bytes: Array[Byte]): RoaringBitmap = {
    val rb = new RoaringBitmap()
    rb.deserialize(ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN))
    rb
  }

  private def readArrow(bytes: Array[Byte]): RoaringBitmap = {
    val rb = new RoaringBitmap()
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val reader = new ArrowFileReader(
        new ByteArrayReadableSeekableByteChannel(bytes),
        allocator,
        ZstdCodecFactory
      )
      try {
        val root = reader.getVectorSchemaRoot
        while (reader.loadNextBatch()) {
          root.getVector(0) match {
            case v: UInt4Vector =>
              var i = 0; while (i < v.getValueCount) { rb.add(v.get(i)); i += 1 }
            case v: IntVector => var i = 0; while (i < v.getValueCount) { rb.add(v.get(i)); i += 1 }
            case other =>
              throw new IllegalStateException(s"unexpected column type ${other.getField}")
          }
        }
      } finally reader.close()
    } finally allocator.close()
    rb
  }

  /** Arrow's own ZSTD codec lives in arrow-compression, which Spark does not ship; zstd-jni does the work. */
  private object ZstdCodecFactory extends CompressionCodec.Factory {
    override def createCodec(t: CompressionUtil.CodecType): CompressionCodec = t match {
      case CompressionUtil.CodecType.NO_COMPRESSION => NoCompressionCodec.INSTANCE
      case CompressionUtil.CodecType.ZSTD => ZstdCodec
      case other => throw new UnsupportedOperationException(s"Arrow IPC compression $other")
    }
    // Arrow 18 (Spark 4) asks for this one too; Arrow 12 (Spark 3.5) does not have it, so no
    // `override`: core compiles against Arrow 12 and links against both.
    def createCodec(t: CompressionUtil.CodecType, level: Int): CompressionCodec = createCodec(t)
  }

  private object ZstdCodec extends AbstractCompressionCodec {
    override protected def doCompress(a: BufferAllocator, b: ArrowBuf): ArrowBuf =
      throw new UnsupportedOperationException("compression")

    override protected def doDecompress(a: BufferAllocator, compressed: ArrowBuf): ArrowBuf = {
      val outLen = readUncompressedLength(compressed)
      val src = new Array[Byte](
        (compressed.writerIndex() - CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH).toInt
      )
      compressed.getBytes(CompressionUtil.SIZE_OF_UNCOMPRESSED_LENGTH, src)
      val out = com.github.luben.zstd.Zstd.decompress(src, outLen.toInt)
      val buf = a.buffer(outLen)
      buf.setBytes(0, out)
      buf.writerIndex(outLen)
      buf
    }

    override def getCodecType: CompressionUtil.CodecType = CompressionUtil.CodecType.ZSTD
  }
}
