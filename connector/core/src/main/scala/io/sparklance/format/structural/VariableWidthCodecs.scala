package io.sparklance.format.structural

import io.sparklance.format.codec.{LittleEndian => LE}

/*
 * Variable-width values (strings, binary): offsets and bytes, plain or with compressed
 * offsets, and FSST-compressed bytes.
 * [[Codecs]] picks these from a page's encodings.
 */

/** Offsets (n+1, 32 or 64 bit) relative to the chunk buffer, then the bytes. */
private[structural] final class VariableMini(ow: Int, ref: PageRef) extends MiniBlockCodec {
  def numBuffers = 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val b = bufs(0)
    ref.check(
      b.len.toLong >= (n + 1L) * ow,
      s"variable chunk of ${b.len} bytes cannot hold ${n + 1} offsets"
    )
    val offs = new Array[Int](n + 1)
    var i = 0; var prev = -1L
    while (i <= n) {
      val o = if (ow == 4) LE.u32(b.a, b.off + 4 * i) else LE.i64(b.a, b.off + 8 * i)
      if (!(o >= prev && o <= b.len && (i > 0 || o >= (n + 1L) * ow)))
        throw ref.corrupt(s"variable chunk offset $o at $i is invalid")
      offs(i) = b.off + o.toInt; prev = o; i += 1
    }
    new VarValues(n, offs, 0, b.a)
  }
}

/** Offsets compressed by a block codec (payload in buffer 0 unless the codec has none), bytes after. */
private[structural] final class GenericVariableMini(offsets: BlockCodec, ref: PageRef)
    extends MiniBlockCodec {
  def numBuffers: Int = if (offsets.needsPayload) 2 else 1
  def decode(bufs: Array[Slice], n: Int): Values = {
    val values = bufs(bufs.length - 1)
    val o = offsets.decode(if (offsets.needsPayload) bufs(0) else null, n + 1)
    val raw = Codecs.toLongOffsets(o, n + 1, ref)
    val offs = new Array[Int](n + 1)
    var i = 0; var prev = 0L
    while (i <= n) {
      val x = raw(i)
      if (!(x >= prev && x <= values.len && (i > 0 || x == 0)))
        throw ref.corrupt(s"variable chunk offset $x at $i is invalid")
      offs(i) = values.off + x.toInt; prev = x; i += 1
    }
    new VarValues(n, offs, 0, values.a)
  }
}

private[structural] final class FsstMini(
    table: io.sparklance.format.codec.Fsst.Table,
    inner: MiniBlockCodec,
    ref: PageRef
) extends MiniBlockCodec {
  def numBuffers: Int = inner.numBuffers
  def decode(bufs: Array[Slice], n: Int): Values = inner.decode(bufs, n) match {
    case v: VarValues =>
      val (o, d) = io.sparklance.format.codec.Fsst.decompress(
        table,
        v.data,
        v.offsets,
        v.offOff,
        n,
        ref.toString
      )
      new VarValues(n, o, 0, d)
    case other => throw ref.corrupt(s"FSST codes decoded as ${other.getClass.getSimpleName}")
  }
}

/** `[u32 32 | u32 bytes_start]` or `[u64 64 | u64 bytes_start]`, then n+1 offsets, then bytes (or the older 1-byte-width header). */
private[structural] final class VariableBlock(ref: PageRef) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = {
    val a = buf.a; val o = buf.off
    ref.check(buf.len >= 4, s"variable block of ${buf.len} bytes has no header")
    val old = a(o + 1) != 0 || a(o + 2) != 0 || a(o + 3) != 0
    val (bits, bytesStart, offStart) =
      if (old) {
        val b = a(o) & 0xff
        if (b == 32) {
          ref.check(buf.len >= 9, "short variable block header"); (32, LE.u32(a, o + 5), 9L)
        } else if (b == 64) {
          ref.check(buf.len >= 17, "short variable block header"); (64, LE.i64(a, o + 9), 17L)
        } else throw ref.corrupt(s"variable block with $b-bit offsets")
      } else {
        val b = LE.i32(a, o)
        if (b == 32) {
          ref.check(buf.len >= 8, "short variable block header"); (32, LE.u32(a, o + 4), 8L)
        } else if (b == 64) {
          ref.check(buf.len >= 16, "short variable block header"); (64, LE.i64(a, o + 8), 16L)
        } else throw ref.corrupt(s"variable block with $b-bit offsets")
      }
    val ow = bits / 8
    ref.check(
      bytesStart >= offStart && bytesStart <= buf.len && bytesStart - offStart == (n + 1L) * ow,
      s"variable block offsets region [$offStart, $bytesStart) does not hold ${n + 1} offsets"
    )
    val offs = new Array[Int](n + 1)
    val dataLen = buf.len - bytesStart
    var i = 0; var prev = 0L
    while (i <= n) {
      val x = if (ow == 4) LE.u32(a, o + offStart.toInt + 4 * i)
      else LE.i64(a, o + offStart.toInt + 8 * i)
      if (!(x >= prev && x <= dataLen && (i > 0 || x == 0)))
        throw ref.corrupt(s"variable block offset $x at $i is invalid")
      offs(i) = o + bytesStart.toInt + x.toInt; prev = x; i += 1
    }
    new VarValues(n, offs, 0, a)
  }
}
