package io.sparklance.format.codec

import io.sparklance.LanceErrors

/**
 * Lance's "general" buffer compressors. Both carry the decompressed length in front:
 * LZ4 as a u32 (the lz4 crate's `prepend_size` block format), ZSTD as a u64 before a zstd
 * frame. A bare zstd frame (magic 0xFD2FB528, or anything shorter than 8 bytes) is also
 * accepted, as pylance does. `what` names file/column/page for error messages.
 */
object GeneralCompression {
  final val Lz4 = 1
  final val Zstd = 2
  private val ZstdMagic = 0xfd2fb528

  def decompress(scheme: Int, a: Array[Byte], off: Int, len: Int, what: => String): Array[Byte] =
    scheme match {
      case Lz4 => lz4(a, off, len, what)
      case Zstd => zstd(a, off, len, what)
      case other =>
        throw LanceErrors.corruptFile(what, s"unknown general compression scheme $other")
    }

  private val lz4Factory = net.jpountz.lz4.LZ4Factory.fastestInstance()

  def lz4(a: Array[Byte], off: Int, len: Int, what: => String): Array[Byte] = {
    if (len < 4)
      throw LanceErrors.corruptFile(what, s"LZ4 buffer of $len bytes has no length prefix")
    val n = LittleEndian.i32(a, off)
    if (n < 0) throw LanceErrors.corruptFile(what, s"LZ4 buffer declares a negative length $n")
    val out = new Array[Byte](n)
    val written =
      try lz4Factory.safeDecompressor().decompress(a, off + 4, len - 4, out, 0, n)
      catch {
        case e: Exception =>
          throw LanceErrors.corruptFile(what, s"LZ4 block does not decode: ${e.getMessage}", e)
      }
    if (written != n)
      throw LanceErrors.corruptFile(what, s"LZ4 block decoded to $written bytes, expected $n")
    out
  }

  def zstd(a: Array[Byte], off: Int, len: Int, what: => String): Array[Byte] = {
    if (len == 0) return new Array[Byte](0)
    val bare = len < 8 || LittleEndian.i32(a, off) == ZstdMagic
    try {
      if (bare) {
        val frame = java.util.Arrays.copyOfRange(a, off, off + len)
        val size = ZstdFrames.contentSize(frame)
        if (size >= 0 && size <= Int.MaxValue)
          com.github.luben.zstd.Zstd.decompress(frame, size.toInt)
        else {
          val in =
            new com.github.luben.zstd.ZstdInputStream(new java.io.ByteArrayInputStream(frame))
          try in.readAllBytes()
          finally in.close()
        }
      } else {
        val n = LittleEndian.i64(a, off)
        if (n < 0 || n > Int.MaxValue - 16)
          throw LanceErrors.corruptFile(what, s"ZSTD buffer declares length $n")
        val out = new Array[Byte](n.toInt)
        val written =
          com.github.luben.zstd.Zstd.decompressByteArray(out, 0, n.toInt, a, off + 8, len - 8)
        if (written != n)
          throw LanceErrors.corruptFile(what, s"ZSTD frame decoded to $written bytes, expected $n")
        out
      }
    } catch {
      case e: io.sparklance.LanceException => throw e
      case e: Exception =>
        throw LanceErrors.corruptFile(what, s"ZSTD frame does not decode: ${e.getMessage}", e)
    }
  }
}
