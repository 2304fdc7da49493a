package io.sparklance.format.v20

import io.sparklance.format.{ColumnArray, FixedWidthArray, PageContext}
import io.sparklance.proto.EncodingsV20Protos.Flat

/**
 * `Flat{bits_per_value, buffer, compression}`: packed little-endian values. 1 bit is an
 * LSB-first bitmap (booleans, validity); 8..256 bits are whole bytes per value. When
 * `compression` names a scheme the whole buffer is compressed (only with opt-in field metadata).
 */
object FlatDecoder {

  /** The (decompressed) buffer bytes, checked to hold at least `n` values. */
  def bytes(f: Flat, n: Int, bufs: PageBuffers, ctx: PageContext): Array[Byte] = {
    val bits = f.getBitsPerValue
    ctx.check(
      bits >= 1 && bits <= 1024 && (bits == 1 || bits % 8 == 0),
      s"unsupported Flat width of $bits bits"
    )
    ctx.check(f.hasBuffer, "Flat encoding has no buffer")
    val raw = bufs.get(f.getBuffer)
    val data =
      if (
        f.hasCompression && f.getCompression.getScheme.nonEmpty && f.getCompression.getScheme != "none"
      )
        BufferCompression.decompress(f.getCompression.getScheme, raw, ctx)
      else raw
    val need = if (bits == 1) (n.toLong + 7) / 8 else n.toLong * (bits / 8)
    ctx.check(
      data.length >= need,
      s"Flat buffer holds ${data.length} bytes but $n values of $bits bits need $need"
    )
    data
  }

  /** `n` values of `byteWidth` bytes (bits must match), sharing the buffer when it is exactly that size. */
  def fixed(
      f: Flat,
      n: Int,
      byteWidth: Int,
      bool: Boolean,
      bufs: PageBuffers,
      ctx: PageContext
  ): ColumnArray = {
    val bits = f.getBitsPerValue
    val data = bytes(f, n, bufs, ctx)
    if (bits == 1) {
      ctx.check(byteWidth == 1, s"a 1-bit Flat cannot hold $byteWidth-byte values")
      new FixedWidthArray(n, null, 1, unpackBits(data, n))
    } else {
      ctx.check(
        bits == 8L * byteWidth,
        s"Flat has $bits bits per value but the field stores ${8 * byteWidth}"
      )
      val len = n * byteWidth
      new FixedWidthArray(
        n,
        null,
        byteWidth,
        if (data.length == len) data else java.util.Arrays.copyOf(data, len)
      )
    }
  }

  /**
   * Values `[from, until)` of a page of `n` values, reading only their bytes: for an
   * uncompressed byte-aligned Flat (of `byteWidth` bytes a value) or a 1-bit one (`byteWidth`
   * 0: the bitmap bytes covering the window, whose first value is bit `from % 8`). Null when
   * the buffer is compressed or not a page buffer; the caller then decodes the whole page.
   */
  def window(
      f: Flat,
      n: Int,
      from: Int,
      until: Int,
      byteWidth: Int,
      bufs: PageBuffers,
      ctx: PageContext
  ): Array[Byte] = {
    val bits = f.getBitsPerValue
    if (
      !f.hasBuffer || (f.hasCompression && f.getCompression.getScheme.nonEmpty && f.getCompression.getScheme != "none")
    ) return null
    if (byteWidth == 0) {
      if (bits != 1) return null
      val lo = from >>> 3; val hi = (until + 7) >>> 3
      bufs.pageRange(f.getBuffer, lo, hi - lo, (n.toLong + 7) / 8)
    } else {
      if (bits != 8L * byteWidth) return null
      bufs.pageRange(
        f.getBuffer,
        from.toLong * byteWidth,
        Math.multiplyExact(until - from, byteWidth),
        n.toLong * byteWidth
      )
    }
  }

  /** Null flags (true = null) from an LSB-first validity bitmap; null when no value is null. */
  def nullsFromValidity(f: Flat, n: Int, bufs: PageBuffers, ctx: PageContext): Array[Boolean] = {
    ctx.check(
      f.getBitsPerValue == 1,
      s"validity must be a 1-bit Flat, found ${f.getBitsPerValue} bits"
    )
    val bitmap = bytes(f, n, bufs, ctx)
    val nulls = new Array[Boolean](n)
    var any = false
    var i = 0
    while (i < n) {
      val isNull = ((bitmap(i >>> 3) >>> (i & 7)) & 1) == 0
      nulls(i) = isNull
      any |= isNull
      i += 1
    }
    if (any) nulls else null
  }

  /** One byte (0/1) per bit, LSB-first. */
  def unpackBits(bitmap: Array[Byte], n: Int): Array[Byte] = {
    val out = new Array[Byte](n)
    var i = 0
    // Whole bytes first: 8 values per source byte without per-bit index math.
    val whole = n & ~7
    while (i < whole) {
      val b = bitmap(i >>> 3)
      out(i) = (b & 1).toByte
      out(i + 1) = ((b >>> 1) & 1).toByte
      out(i + 2) = ((b >>> 2) & 1).toByte
      out(i + 3) = ((b >>> 3) & 1).toByte
      out(i + 4) = ((b >>> 4) & 1).toByte
      out(i + 5) = ((b >>> 5) & 1).toByte
      out(i + 6) = ((b >>> 6) & 1).toByte
      out(i + 7) = ((b >>> 7) & 1).toByte
      i += 8
    }
    while (i < n) { out(i) = ((bitmap(i >>> 3) >>> (i & 7)) & 1).toByte; i += 1 }
    out
  }
}
