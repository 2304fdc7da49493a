package io.sparklance.format.writer

import io.sparklance.format.codec.{GeneralCompression, LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos.CompressionScheme

/**
 * Statistics over fixed-width little-endian values that the compressor choices need. The
 * passes over a page's values have one loop per common width (1, 2, 4, 8 bytes), so the
 * width is not tested again for every value.
 */
private[writer] object ValueStats {
  @inline def same(a: Array[Byte], w: Int, i: Int, j: Int): Boolean = w match {
    case 1 => a(i) == a(j)
    case 2 => LE.u16(a, 2 * i) == LE.u16(a, 2 * j)
    case 4 => LE.i32(a, 4 * i) == LE.i32(a, 4 * j)
    case 8 => LE.i64(a, 8 * i) == LE.i64(a, 8 * j)
    case _ => java.util.Arrays.equals(a, i * w, i * w + w, a, j * w, j * w + w)
  }

  /** Runs of equal values in `[from, until)`, a run counted once per `maxRun` values. */
  def runs(a: Array[Byte], w: Int, from: Int, until: Int, maxRun: Int): Int = {
    if (until <= from) return 0
    var r = 1; var len = 1; var i = from + 1
    w match {
      case 8 =>
        var prev = LE.i64(a, 8 * from)
        while (i < until) {
          val v = LE.i64(a, 8 * i)
          if (len < maxRun && v == prev) len += 1 else { r += 1; len = 1 }
          prev = v; i += 1
        }
      case 4 =>
        var prev = LE.i32(a, 4 * from)
        while (i < until) {
          val v = LE.i32(a, 4 * i)
          if (len < maxRun && v == prev) len += 1 else { r += 1; len = 1 }
          prev = v; i += 1
        }
      case 1 =>
        var prev = a(from)
        while (i < until) {
          val v = a(i)
          if (len < maxRun && v == prev) len += 1 else { r += 1; len = 1 }
          prev = v; i += 1
        }
      case _ =>
        while (i < until) {
          if (len < maxRun && same(a, w, i - 1, i)) len += 1 else { r += 1; len = 1 }
          i += 1
        }
    }
    r
  }

  /** The end of the run of values equal to value `i`, at most `maxRun` long and before `end`. */
  def runEnd(a: Array[Byte], w: Int, i: Int, end: Int, maxRun: Int): Int = {
    val stop = math.min(end, i + maxRun)
    var j = i + 1
    w match {
      case 8 => val v = LE.i64(a, 8 * i); while (j < stop && LE.i64(a, 8 * j) == v) j += 1
      case 4 => val v = LE.i32(a, 4 * i); while (j < stop && LE.i32(a, 4 * j) == v) j += 1
      case _ => while (j < stop && same(a, w, i, j)) j += 1
    }
    j
  }

  /** Runs of equal values, each counted once however long (pylance's RunCount statistic). */
  def runCount(a: Array[Byte], w: Int, n: Int): Long =
    if (n == 0) 0L else runs(a, w, 0, n, Int.MaxValue).toLong

  /**
   * Bytes of RLE with u8 lengths over `[0, n)`, runs also broken every `segment` values; or
   * `Long.MaxValue` as soon as the bytes so far exceed `limit` (RLE is not taken then, and the
   * rest of the page need not be counted).
   */
  def rleBytes(a: Array[Byte], w: Int, n: Int, segment: Int, limit: Long = Long.MaxValue): Long = {
    var total = 0L; var s = 0
    while (s < n) {
      val e = math.min(n, s + segment)
      total += runs(a, w, s, e, 255).toLong * (w + 1)
      if (total > limit) return Long.MaxValue
      s = e
    }
    total
  }

  /**
   * Mean Shannon entropy in bits of each byte position over the first 64 values (pylance's
   * BytePositionEntropy statistic, truncated to thousandths as it stores it).
   */
  def bytePositionEntropy(a: Array[Byte], w: Int, n: Int): Double = {
    val samples = math.min(n, 64)
    if (samples == 0) return Double.MaxValue
    var sum = 0L
    val counts = new Array[Int](256)
    var pos = 0
    while (pos < w) {
      java.util.Arrays.fill(counts, 0)
      var i = 0
      while (i < samples) { counts(a(i * w + pos) & 0xff) += 1; i += 1 }
      var e = 0.0; var b = 0
      while (b < 256) {
        if (counts(b) > 0) {
          val p = counts(b).toDouble / samples
          e -= p * math.log(p) / math.log(2)
        }
        b += 1
      }
      sum += (e * 1000).toLong
      pos += 1
    }
    sum.toDouble / w / 1000.0
  }

  def scheme(s: Int): CompressionScheme =
    if (s == GeneralCompression.Lz4) CompressionScheme.COMPRESSION_ALGORITHM_LZ4
    else CompressionScheme.COMPRESSION_ALGORITHM_ZSTD
}
