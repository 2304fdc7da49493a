package io.sparklance.format.structural

import io.sparklance.format.codec.GeneralCompression

/*
 * Byte-level transforms around another codec: byte-stream split, and general compression
 * (LZ4, ZSTD) of chunk buffers, blocks or single values.
 * [[Codecs]] picks these from a page's encodings.
 */

/** Byte k of value i is stored at k*n + i. */
private[structural] final class BssMini(w: Int, ref: PageRef) extends MiniBlockCodec {
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    ref.check(
      b.len.toLong >= n.toLong * w,
      s"byte-stream-split buffer of ${b.len} bytes for $n values"
    )
    val out = new Array[Byte](n * w)
    var k = 0
    while (k < w) {
      var i = 0; val src = b.off + k * n
      while (i < n) { out(i * w + k) = b.a(src + i); i += 1 }
      k += 1
    }
    new FixedValues(n, w, out, 0)
  }
}

/** General compression of buffer 0 of each chunk. */
private[structural] final class GeneralMini(scheme: Int, inner: MiniBlockCodec, ref: PageRef)
    extends MiniBlockCodec {
  def numBuffers: Int = inner.numBuffers
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    val d = GeneralCompression.decompress(scheme, b.a, b.off, b.len, ref.toString)
    val copy = bufs.clone(); copy(0) = Slice.of(d)
    inner.decode(copy, n)
  }
}

private[structural] final class GeneralBlock(scheme: Int, inner: BlockCodec, ref: PageRef)
    extends BlockCodec {
  def decode(buf: Slice, n: Int): Values =
    inner.decode(
      Slice.of(GeneralCompression.decompress(scheme, buf.a, buf.off, buf.len, ref.toString)),
      n
    )
}

/** Each value separately compressed (LZ4 or ZSTD with their length prefixes); empty stays empty. */
private[structural] final class GeneralPerValue(scheme: Int, ref: PageRef)
    extends VarPerValueCodec {
  def decode(raw: VarValues): Values = {
    val n = raw.count
    val parts = new Array[Array[Byte]](n)
    var total = 0L; var i = 0
    while (i < n) {
      val s = raw.offsets(raw.offOff + i); val e = raw.offsets(raw.offOff + i + 1)
      parts(i) = if (e == s) Array.emptyByteArray
      else GeneralCompression.decompress(scheme, raw.data, s, e - s, ref.toString)
      total += parts(i).length; i += 1
    }
    ref.check(total < Int.MaxValue - 16, "decompressed values exceed 2 GiB")
    val data = new Array[Byte](total.toInt); val offs = new Array[Int](n + 1)
    i = 0; var o = 0
    while (i < n) {
      System.arraycopy(parts(i), 0, data, o, parts(i).length); o += parts(i).length;
      offs(i + 1) = o; i += 1
    }
    new VarValues(n, offs, 0, data)
  }
}
