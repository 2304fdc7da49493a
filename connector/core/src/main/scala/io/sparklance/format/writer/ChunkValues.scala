package io.sparklance.format.writer

import io.sparklance.format.codec.{GeneralCompression, GeneralCompressor, LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos._

/**
 * The values of one mini-block page as a value compressor sees them: how many bytes a chunk
 * of values `[from, from + k)` takes (which decides where chunks are cut), the buffers it
 * writes, and the `CompressiveEncoding` that describes them. [[MiniBlockEncoder]] plans the
 * chunks; each implementation is one of the compressors pylance's mini-block path picks.
 */
private[writer] abstract class ChunkValues {
  def count: Int
  def numBuffers: Int

  /** Most values in one chunk. */
  def maxValues: Int = 4096

  /** Fewest values in a chunk that is not the last (bitmaps need whole bytes). */
  def minValues: Int = 2

  /** Bytes of the chunk's value buffers before compression and padding. */
  def bytes(from: Int, k: Int): Long

  /** The chunk's value buffers, valid until the next call (they may be reused for it). */
  def buffers(from: Int, k: Int): Seq[ByteBuf]
  def encoding: CompressiveEncoding
}

/** Values stored as they are: `Flat` (booleans as an LSB bitmap). */
private[writer] final class FlatChunks(data: Array[Byte], width: Int, bool: Boolean, val count: Int)
    extends ChunkValues {
  def numBuffers = 1
  override def minValues: Int = if (bool) 8 else 2
  def bytes(from: Int, k: Int): Long = if (bool) (k + 7) / 8 else k.toLong * width
  private val buf = new ByteBuf(1024)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = {
    buf.clear()
    if (bool) MiniBlockEncoder.bitmap(data, from, k, buf)
    else buf.bytes(data, from * width, k * width)
    Seq(buf)
  }
  def encoding: CompressiveEncoding = Encodings.flat(if (bool) 1 else width * 8)
}

/**
 * Packed struct rows (see [[PackedStructs]]): stored flat, `PackedStruct{bits_per_value: child
 * widths, values: Flat(row bits)}`; pylance never compresses them further.
 */
private[writer] final class PackedStructChunks(
    data: Array[Byte],
    widths: Array[Int],
    val count: Int
) extends ChunkValues {
  private val flat = new FlatChunks(data, widths.sum, bool = false, count)
  def numBuffers = 1
  def bytes(from: Int, k: Int): Long = flat.bytes(from, k)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = flat.buffers(from, k)
  def encoding: CompressiveEncoding = {
    val b = PackedStruct.newBuilder().setValues(flat.encoding)
    widths.foreach(w => b.addBitsPerValue(w.toLong * 8))
    CompressiveEncoding.newBuilder().setPackedStruct(b).build()
  }
}

/** Fastlanes `InlineBitpacking`: one 1024-value block per chunk, each with its own width. */
private[writer] final class BitpackChunks(data: Array[Byte], width: Int, val count: Int)
    extends ChunkValues {
  def numBuffers = 1
  override def maxValues = 1024
  def bytes(from: Int, k: Int): Long = FastLanesPack.packedSize(data, width, from, from + k)
  private val buf = new ByteBuf(width * 1024 + 16)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = {
    buf.clear()
    FastLanesPack.packBlock(data, width, from, from + k, buf)
    Seq(buf)
  }
  def encoding: CompressiveEncoding = Encodings.inlineBitpacking(width * 8)
}

/**
 * `ByteStreamSplit(Flat)`: within each chunk, byte j of value i stored at `j * k + i`, which
 * groups similar bytes for the general compressor that always wraps it.
 */
private[writer] final class BssChunks(data: Array[Byte], width: Int, val count: Int)
    extends ChunkValues {
  def numBuffers = 1
  // pylance's chunk sizes: 1024 four-byte or 512 eight-byte values.
  override def maxValues: Int = if (width == 4) 1024 else 512
  def bytes(from: Int, k: Int): Long = k.toLong * width
  def buffers(from: Int, k: Int): Seq[ByteBuf] = {
    val out = new Array[Byte](k * width)
    var i = 0
    while (i < k) {
      var j = 0; val src = (from + i) * width
      while (j < width) { out(j * k + i) = data(src + j); j += 1 }
      i += 1
    }
    val b = new ByteBuf(out.length + 8); b.bytes(out)
    Seq(b)
  }
  def encoding: CompressiveEncoding =
    CompressiveEncoding.newBuilder().setByteStreamSplit(
      ByteStreamSplit.newBuilder().setValues(Encodings.flat(width * 8))
    ).build()
}

/** `Rle{values: Flat, run_lengths: Flat(8)}`: run values and u8 run lengths (runs split at 255). */
private[writer] final class RleChunks(data: Array[Byte], width: Int, val count: Int)
    extends ChunkValues {
  def numBuffers = 2
  def bytes(from: Int, k: Int): Long =
    ValueStats.runs(data, width, from, from + k, 255).toLong * (width + 1)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = {
    val vals = new ByteBuf(256); val lens = new ByteBuf(128)
    var i = from; val end = from + k
    while (i < end) {
      val j = ValueStats.runEnd(data, width, i, end, 255)
      width match {
        case 8 => vals.u64(LE.i64(data, 8 * i))
        case 4 => vals.u32(LE.i32(data, 4 * i).toLong)
        case _ => vals.bytes(data, i * width, width)
      }
      lens.u8(j - i)
      i = j
    }
    Seq(vals, lens)
  }
  def encoding: CompressiveEncoding =
    CompressiveEncoding.newBuilder().setRle(
      Rle.newBuilder().setValues(Encodings.flat(width * 8)).setRunLengths(Encodings.flat(8))
    ).build()
}

/**
 * `Variable`: per chunk, `k + 1` offsets relative to the chunk buffer (32 or 64-bit), then
 * the bytes, padded to the offset width. `offsets` index `data`.
 */
private[writer] final class VarChunks(
    offsets: Array[Int],
    data: Array[Byte],
    large: Boolean,
    val count: Int
) extends ChunkValues {
  private val ow = if (large) 8 else 4
  def numBuffers = 1
  def bytes(from: Int, k: Int): Long = {
    val raw = ow.toLong * (k + 1) + (offsets(from + k) - offsets(from))
    (raw + ow - 1) & ~(ow - 1).toLong
  }
  private val b = new ByteBuf(1024)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = {
    val base = offsets(from)
    val head = ow * (k + 1)
    b.clear()
    b.ensure(head + offsets(from + k) - base + 8)
    val at = b.extend(head)
    val o = b.array
    val shift = head - base
    var i = 0
    if (large) {
      while (i <= k) { LE.putI64(o, at + 8 * i, (offsets(from + i) + shift).toLong); i += 1 }
    } else while (i <= k) { LE.putI32(o, at + 4 * i, offsets(from + i) + shift); i += 1 }
    b.bytes(data, base, offsets(from + k) - base)
    b.pad(ow, ContainerWriter.Pad)
    Seq(b)
  }
  def encoding: CompressiveEncoding = Encodings.variable(ow * 8)
}

/** FSST codes stored as `Variable` chunks; the symbol table travels in the encoding. */
private[writer] final class FsstChunks(table: Array[Byte], codes: VarChunks) extends ChunkValues {
  def count: Int = codes.count
  def numBuffers = 1
  def bytes(from: Int, k: Int): Long = codes.bytes(from, k)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = codes.buffers(from, k)
  def encoding: CompressiveEncoding = Encodings.fsst(table, codes.encoding)
}

/** Fixed-size lists of fixed-width items: `FixedSizeList(Flat)`, item validity first when some item is null. */
private[writer] final class FslChunks(l: FslValuesBuf) extends ChunkValues {
  def count: Int = l.count
  def numBuffers: Int = if (l.anyItemNull) 2 else 1
  override def minValues: Int = if (l.itemBool || l.anyItemNull) 8 else 2
  private def pad8(n: Long): Long = (n + 7) & ~7L
  def bytes(from: Int, k: Int): Long = {
    val items = k.toLong * l.dim
    (if (l.anyItemNull) pad8((items + 7) / 8) else 0L) + (if (l.itemBool) (items + 7) / 8
                                                          else items * l.itemWidth)
  }
  def buffers(from: Int, k: Int): Seq[ByteBuf] = {
    val items = k * l.dim
    val d = new ByteBuf(items * l.itemWidth + 8)
    if (l.itemBool) MiniBlockEncoder.bitmap(l.data.array, from * l.dim, items, d)
    else d.bytes(l.data.array, from * l.width, k * l.width)
    if (l.anyItemNull) {
      val vb = new ByteBuf(items / 8 + 8)
      MiniBlockEncoder.bitmap(l.itemValid.array, from * l.dim, items, vb)
      Seq(vb, d)
    } else Seq(d)
  }
  def encoding: CompressiveEncoding =
    Encodings.fsl(l.dim, l.anyItemNull, Encodings.flat(if (l.itemBool) 1 else l.itemWidth * 8))
}

/**
 * `General`: buffer 0 of every chunk compressed with zstd or lz4. Chunks are cut on the
 * uncompressed sizes, as pylance's wrapper does.
 */
private[writer] final class GeneralChunks(inner: ChunkValues, scheme: Int, level: Option[Int])
    extends ChunkValues {
  def count: Int = inner.count
  def numBuffers: Int = inner.numBuffers
  override def maxValues: Int = inner.maxValues
  override def minValues: Int = inner.minValues
  def bytes(from: Int, k: Int): Long = inner.bytes(from, k)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = {
    val bs = inner.buffers(from, k)
    val b0 = bs.head
    val c = GeneralCompressor.compress(scheme, level.getOrElse(0), b0.array, 0, b0.size)
    val out = new ByteBuf(c.length + 8); out.bytes(c)
    out +: bs.tail
  }
  def encoding: CompressiveEncoding = Encodings.general(scheme, level, inner.encoding)
}
