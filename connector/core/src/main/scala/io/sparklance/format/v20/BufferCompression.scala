package io.sparklance.format.v20

import io.sparklance.format.PageContext

/** Whole-buffer compression named by `Compression.scheme` (zstd, lz4). */
object BufferCompression {
  def decompress(scheme: String, data: Array[Byte], ctx: PageContext): Array[Byte] = {
    if (data.isEmpty) return data
    scheme.toLowerCase(java.util.Locale.ROOT) match {
      case "zstd" => zstd(data, ctx)
      case "lz4" => lz4(data, ctx)
      case other => throw ctx.corrupt(s"unknown buffer compression scheme '$other'")
    }
  }

  private val ZstdMagic = 0xfd2fb528

  /** Lance writes `u64 LE uncompressed length` + a zstd frame; a bare frame is accepted too. */
  private def zstd(data: Array[Byte], ctx: PageContext): Array[Byte] = {
    val bb = java.nio.ByteBuffer.wrap(data).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    val bareFrame = data.length < 8 || (bb.getInt(0) == ZstdMagic && (data(4) & 0x10) == 0)
    try {
      if (bareFrame) {
        val size = io.sparklance.format.codec.ZstdFrames.contentSize(data)
        if (size >= 0 && size <= Int.MaxValue - 16)
          com.github.luben.zstd.Zstd.decompress(data, size.toInt)
        else {
          val in = new com.github.luben.zstd.ZstdInputStream(new java.io.ByteArrayInputStream(data))
          try in.readAllBytes()
          finally in.close()
        }
      } else {
        val size = bb.getLong(0)
        ctx.check(
          size >= 0 && size <= Int.MaxValue - 16,
          s"zstd buffer claims $size uncompressed bytes"
        )
        val out = new Array[Byte](size.toInt)
        val got = com.github.luben.zstd.Zstd.decompressByteArray(
          out,
          0,
          out.length,
          data,
          8,
          data.length - 8
        )
        ctx.check(got == size, s"zstd buffer decompressed to $got bytes, expected $size")
        out
      }
    } catch {
      case e: com.github.luben.zstd.ZstdException =>
        throw ctx.corrupt(s"zstd buffer does not decompress: ${e.getMessage}", e)
      case e: java.io.IOException =>
        throw ctx.corrupt(s"zstd buffer does not decompress: ${e.getMessage}", e)
    }
  }

  /** Lance writes `u32 LE uncompressed length` + a raw LZ4 block. */
  private def lz4(data: Array[Byte], ctx: PageContext): Array[Byte] = {
    ctx.check(data.length >= 4, "lz4 buffer shorter than its length prefix")
    val size = java.nio.ByteBuffer.wrap(data).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(0)
    ctx.check(size >= 0, s"lz4 buffer claims $size uncompressed bytes")
    val out = new Array[Byte](size)
    try {
      val got = net.jpountz.lz4.LZ4Factory.fastestJavaInstance().safeDecompressor().decompress(
        data,
        4,
        data.length - 4,
        out,
        0,
        size
      )
      ctx.check(got == size, s"lz4 buffer decompressed to $got bytes, expected $size")
    } catch {
      case e: net.jpountz.lz4.LZ4Exception =>
        throw ctx.corrupt(s"lz4 buffer does not decompress: ${e.getMessage}", e)
    }
    out
  }
}
