package io.sparklance.format.structural

import io.sparklance.format.codec.{LittleEndian => LE}

/*
 * Values described rather than stored one by one: run-length encoded, one constant, an
 * arithmetic range, or deltas from a base.
 * [[Codecs]] picks these from a page's encodings.
 */

private[structural] object Rle {

  /** Runs up to this long are written value by value rather than by doubling copies. */
  private val ShortRun = 32

  /** Expands runs; `clamp` tolerates a last run longer than needed (mini-block form). */
  def expand(
      values: Slice,
      lengths: Slice,
      vb: Int,
      lb: Int,
      vc: BlockCodec,
      lc: BlockCodec,
      n: Int,
      clamp: Boolean,
      ref: PageRef
  ): Values = {
    var vals = values; var lens = lengths
    if (lc != null && vc != null) throw ref.unsupported("RLE with both children compressed")
    if (lc != null) {
      ref.check(values.len % vb == 0, "RLE values are not whole values")
      val d = lc.decode(lengths, values.len / vb); lens = Codecs.fixedSlice(d, lb, ref)
    } else if (vc != null) {
      ref.check(lengths.len % lb == 0, "RLE run lengths are not whole values")
      val d = vc.decode(values, lengths.len / lb); vals = Codecs.fixedSlice(d, vb, ref)
    }
    ref.check(
      vals.len % vb == 0 && lens.len % lb == 0 && vals.len / vb == lens.len / lb,
      s"RLE buffers disagree: ${vals.len} value bytes, ${lens.len} length bytes"
    )
    val runs = vals.len / vb
    val out = new Array[Byte](n * vb)
    var produced = 0; var r = 0
    while (r < runs && produced < n) {
      val len = LE.uint(lens.a, lens.off + r * lb, lb)
      if (len <= 0) throw ref.corrupt("RLE run of length 0")
      if (len > n - produced && !clamp) throw ref.corrupt(s"RLE runs exceed the $n expected values")
      val k = math.min(len, (n - produced).toLong).toInt
      val src = vals.off + r * vb
      val start = produced * vb
      if (vb == 1) java.util.Arrays.fill(out, start, start + k, vals.a(src))
      else if (vb == 8 && k <= ShortRun) {
        // Short runs (a sorted key's few repeats): one word written k times, no arraycopy.
        val v = LE.i64(vals.a, src)
        var p = start; val end = start + k * 8
        while (p < end) { LE.putI64(out, p, v); p += 8 }
      } else if (vb == 4 && k <= ShortRun) {
        val v = LE.i32(vals.a, src)
        var p = start; val end = start + k * 4
        while (p < end) { LE.putI32(out, p, v); p += 4 }
      } else {
        System.arraycopy(vals.a, src, out, start, vb)
        // Doubling copies fill the run in log(k) arraycopy calls.
        var filled = 1
        while (filled < k) {
          val c = math.min(filled, k - filled);
          System.arraycopy(out, start, out, start + filled * vb, c * vb); filled += c
        }
      }
      produced += k; r += 1
    }
    ref.check(produced == n, s"RLE runs decode to $produced values, expected $n")
    new FixedValues(n, vb, out, 0)
  }

  def sumRuns(lengths: Slice, lb: Int): Long = {
    var s = 0L; var i = 0
    while (i + lb <= lengths.len) { s += LE.uint(lengths.a, lengths.off + i, lb); i += lb }
    s
  }
}

private[structural] final class RleMini(
    vb: Int,
    lb: Int,
    vc: BlockCodec,
    lc: BlockCodec,
    ref: PageRef
) extends MiniBlockCodec {
  def numBuffers = 2
  def decode(bufs: Array[Slice], n: Int): Values =
    if (n == 0) new FixedValues(0, vb, new Array[Byte](0), 0)
    else Rle.expand(bufs(0), bufs(1), vb, lb, vc, lc, n, clamp = true, ref)
}

/** `u64 values_bytes | values | run lengths`. */
private[structural] final class RleBlock(
    vb: Int,
    lb: Int,
    vc: BlockCodec,
    lc: BlockCodec,
    ref: PageRef
) extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = {
    if (n == 0) return new FixedValues(0, vb, new Array[Byte](0), 0)
    val (v, l) = RleBlock.split(buf, ref)
    Rle.expand(v, l, vb, lb, vc, lc, n, clamp = false, ref)
  }

  /** The level count the runs encode, when it can be read without decoding children. */
  def countValues(buf: Slice): Option[Long] =
    if (vc != null || lc != null) None
    else { val (_, l) = RleBlock.split(buf, ref); Some(Rle.sumRuns(l, lb)) }
}

private[structural] object RleBlock {
  def split(buf: Slice, ref: PageRef): (Slice, Slice) = {
    ref.check(buf.len >= 8, s"RLE block of ${buf.len} bytes has no header")
    val vs = LE.i64(buf.a, buf.off)
    ref.check(vs >= 0 && vs <= buf.len - 8, s"RLE block declares $vs value bytes in ${buf.len}")
    (buf.sub(8, vs.toInt), buf.sub(8 + vs.toInt, buf.len - 8 - vs.toInt))
  }
}

private[structural] final class ConstantBlock(value: Array[Byte]) extends BlockCodec {
  override def needsPayload = false
  def decode(buf: Slice, n: Int): Values =
    new ConstantValues(n, if (value == null) null else new FixedValues(1, value.length, value, 0))
}

private[structural] final class RangeBlock(w: Int, start: Long, step: Long) extends BlockCodec {
  override def needsPayload = false
  def decode(buf: Slice, n: Int): Values = {
    val out = new Array[Byte](n * w); var i = 0
    while (i < n) {
      val v = start + step * i
      w match {
        case 8 => LE.putI64(out, 8 * i, v); case 4 => LE.putI32(out, 4 * i, v.toInt);
        case 2 => LE.putI16(out, 2 * i, v.toShort); case _ => out(i) = v.toByte
      }
      i += 1
    }
    new FixedValues(n, w, out, 0)
  }
}

private[structural] final class DeltaBlock(w: Int, base: Long, deltas: BlockCodec, ref: PageRef)
    extends BlockCodec {
  def decode(buf: Slice, n: Int): Values = {
    val out = new Array[Byte](n * w)
    if (n == 0) return new FixedValues(0, w, out, 0)
    val d = Codecs.fixedSlice(deltas.decode(buf, n - 1), w, ref)
    var v = base; var i = 0
    while (i < n) {
      if (i > 0) v += LE.uint(d.a, d.off + (i - 1) * w, w)
      w match {
        case 8 => LE.putI64(out, 8 * i, v); case 4 => LE.putI32(out, 4 * i, v.toInt);
        case 2 => LE.putI16(out, 2 * i, v.toShort); case _ => out(i) = v.toByte
      }
      i += 1
    }
    new FixedValues(n, w, out, 0)
  }
}
