package io.sparklance.format.codec

/**
 * The writing side of [[GeneralCompression]]: LZ4 blocks behind a u32 uncompressed length,
 * ZSTD frames behind a u64 uncompressed length, as Lance's buffer compressors frame them.
 * `level` is the scheme's level (ZSTD: 1..22, 0 meaning zstd's default; LZ4: ignored, the
 * fast block compressor is what Lance uses).
 */
object GeneralCompressor {
  private lazy val lz4 = net.jpountz.lz4.LZ4Factory.fastestInstance().fastCompressor()

  def compress(scheme: Int, level: Int, a: Array[Byte], off: Int, len: Int): Array[Byte] =
    scheme match {
      case GeneralCompression.Lz4 =>
        val c = lz4
        val out = new Array[Byte](4 + c.maxCompressedLength(len))
        LittleEndian.putI32(out, 0, len)
        val n = c.compress(a, off, len, out, 4, out.length - 4)
        java.util.Arrays.copyOf(out, 4 + n)
      case GeneralCompression.Zstd =>
        val bound = com.github.luben.zstd.Zstd.compressBound(len.toLong)
        val out = new Array[Byte]((8 + bound).toInt)
        LittleEndian.putI64(out, 0, len.toLong)
        val lvl = if (level == 0) com.github.luben.zstd.Zstd.defaultCompressionLevel() else level
        val n =
          com.github.luben.zstd.Zstd.compressByteArray(out, 8, out.length - 8, a, off, len, lvl)
        if (com.github.luben.zstd.Zstd.isError(n))
          throw new IllegalStateException(s"zstd: ${com.github.luben.zstd.Zstd.getErrorName(n)}")
        java.util.Arrays.copyOf(out, 8 + n.toInt)
      case other => throw new IllegalArgumentException(s"unknown general compression scheme $other")
    }
}
