package io.sparklance.format.writer

import io.sparklance.format.codec.{GeneralCompressor, LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos._

/**
 * Page dictionaries for 2.1/2.2 mini-block pages, decided as pylance 14.0.2 decides them
 * (`should_dictionary_encode` / `dictionary_encode`): strings and binaries, 128-bit values,
 * and in 2.2 also 64-bit values; at least 100 values; a sample that does not look unique;
 * at most `values / dict-divisor` (and 100,000) entries; and dictionary plus u32 indices no
 * bigger than `dict-size-ratio` (0.8) of the plain values. Entries are numbered in order of
 * first appearance; a null item indexes whatever its zero/empty placeholder is.
 *
 * One departure, for strings and binaries: their indices are counted at the width they are
 * bitpacked to (the bits of the highest entry), not as u32s. By pylance's count a page of
 * one-byte values (flags and codes such as TPC-H's `l_returnflag`: 5 bytes a value with the
 * offset) never gets a dictionary, though its dictionary and 2-bit indices take a twentieth of
 * that; pylance reads these pages as it reads its own dictionary pages.
 */
private[writer] object DictionaryEncoder {
  private val MinValues = 100
  private val MaxEntries = 100000L
  private val MaxDictBytes = 8L * 1024 * 1024
  private val SampleSize = 4096
  private val SampleBlocks = 32
  private val MinSamples = 1024
  private val UniqueRatio = 0.98

  /** u32 little-endian indices (one per visible value) and the dictionary. */
  final class Encoded(
      val indices: Array[Byte],
      val count: Int,
      val dictionary: MiniBlockEncoder.Dictionary
  )

  def tryEncode(vals: LeafValues, params: EncodingParams, version: FileVersion): Option[Encoded] = {
    val n = vals.count
    val applicable = vals match {
      case f: FixedValuesBuf => !f.bool && (f.width == 16 || (f.width == 8 && version.minor >= 2))
      case _: VarValuesBuf => true
      case _ => false
    }
    if (!applicable || n < MinValues) return None
    val threshold = math.min(n / params.dictDivisor, MaxEntries)
    if (threshold <= 0) return None
    val dataSize = vals match {
      case f: FixedValuesBuf => n.toLong * f.width
      case v: VarValuesBuf => v.data.size.toLong + (n + 1L) * (if (v.large) 8 else 4)
      case _ => 0L
    }
    if (dataSize == 0) return None
    val maxEncoded = (dataSize * params.dictSizeRatio).toLong
    sampleUniqueRatio(vals, n) match {
      case Some(r) if r >= UniqueRatio || math.ceil(r * n).toLong > threshold => return None
      case _ =>
    }
    vals match {
      case f: FixedValuesBuf => encodeFixed(f, n, threshold, maxEncoded, params, version)
      case v: VarValuesBuf => encodeVar(v, n, threshold, maxEncoded, params, version)
      case _ => None
    }
  }

  /** Unique fraction of up to 4096 values taken in 32 evenly spread runs; None below 1024 samples. */
  private def sampleUniqueRatio(vals: LeafValues, n: Int): Option[Double] = {
    val count = math.min(n, SampleSize)
    if (count < MinSamples) return None
    val blocks = math.min(SampleBlocks, count)
    val perBlock = math.max(1, count / blocks)
    // Distinct values counted in an allocation-free map over the page's own bytes.
    val map = vals match {
      case f: FixedValuesBuf => new ByteSliceMap(f.data.array, 2 * SampleSize)
      case v: VarValuesBuf => new ByteSliceMap(v.data.array, 2 * SampleSize)
      case _ => null
    }
    var distinct = 0
    var taken = 0
    var b = 0
    while (b < blocks) {
      val start = (b.toLong * n / blocks).toInt
      val next = math.min(n, ((b + 1L) * n / blocks).toInt)
      val k = math.min(perBlock, next - start)
      var i = 0
      while (i < k) {
        val fresh = vals match {
          case f: FixedValuesBuf => map.getOrPut((start + i) * f.width, f.width, 0) < 0
          case v: VarValuesBuf =>
            val o = v.offsets(start + i); map.getOrPut(o, v.offsets(start + i + 1) - o, 0) < 0
          case _ => true
        }
        if (fresh) distinct += 1
        taken += 1; i += 1
      }
      b += 1
    }
    if (taken < MinSamples) None else Some(distinct.toDouble / taken)
  }

  private def encodeFixed(
      f: FixedValuesBuf,
      n: Int,
      threshold: Long,
      maxEncoded: Long,
      params: EncodingParams,
      version: FileVersion
  ): Option[Encoded] = {
    val w = f.width
    val a = f.data.array
    // The indices alone (with one entry) already too big: no dictionary, nothing counted.
    if (w + 4L * n > maxEncoded) return None
    val map = new WordMap(1024)
    val dict = new ByteBuf(1024)
    val idx = new Array[Byte](4 * n)
    var entries = 0
    var i = 0
    while (i < n) {
      val hi = if (w == 16) LE.i64(a, i * w + 8) else 0L
      var e = map.getOrPut(LE.i64(a, i * w), hi, entries)
      if (e < 0) {
        // The dictionary only grows: once too big, it stays too big.
        if (entries >= threshold || (entries + 1L) * w + 4L * n > maxEncoded) return None
        e = entries; dict.bytes(a, i * w, w); entries += 1
      }
      LE.putI32(idx, 4 * i, e)
      i += 1
    }
    Some(new Encoded(idx, n, fixedBlock(dict, w, entries, params, version)))
  }

  private def encodeVar(
      v: VarValuesBuf,
      n: Int,
      threshold: Long,
      maxEncoded: Long,
      params: EncodingParams,
      version: FileVersion
  ): Option[Encoded] = {
    val a = v.data.array
    val ow = if (v.large) 8 else 4
    // The indices and the offsets of one entry already too big: no dictionary, nothing counted.
    if (indexBytes(n, 1) + 2L * ow > maxEncoded) return None
    // Values of up to 8 bytes (codes, flags, short names) are keyed by their bytes as a word
    // and their length, of 9 to 16 bytes by their two words in a map per length, longer ones
    // by their bytes in place; entries are numbered across all of them.
    val words = new WordMap(1024)
    val pairs = new Array[WordMap](8)
    val map = new ByteSliceMap(a, 1024)
    val dictOffsets = new IntBuf(256); dictOffsets.add(0)
    val dict = new ByteBuf(1024)
    val idx = new Array[Byte](4 * n)
    var entries = 0
    var i = 0
    while (i < n) {
      val s = v.offsets(i); val len = v.offsets(i + 1) - s
      var e =
        if (len <= 8) words.getOrPut(LE.loadPartial(a, s, len), len, entries)
        else if (len <= 16) {
          var m = pairs(len - 9)
          if (m == null) { m = new WordMap(64); pairs(len - 9) = m }
          m.getOrPut(LE.i64(a, s), LE.loadPartial(a, s + 8, len - 8), entries)
        } else map.getOrPut(s, len, entries)
      if (e < 0) {
        val bytes = dict.size.toLong + len
        // The dictionary only grows: once too big, it stays too big.
        if (
          entries >= threshold || bytes > MaxDictBytes ||
          bytes + indexBytes(n, entries + 1) + (entries + 2L) * ow > maxEncoded
        ) return None
        e = entries; dict.bytes(a, s, len); dictOffsets.add(dict.size); entries += 1
      }
      LE.putI32(idx, 4 * i, e)
      i += 1
    }
    Some(new Encoded(idx, n, varBlock(dict, dictOffsets, entries, v.large, params, version)))
  }

  /** Bytes of `n` indices into `entries` entries, bitpacked to the width of the highest. */
  private def indexBytes(n: Int, entries: Int): Long =
    (n.toLong * (32 - Integer.numberOfLeadingZeros(math.max(1, entries - 1))) + 7) / 8

  /** Whether 2.2's block path wraps dictionary values in general compression, and how. */
  private def general(params: EncodingParams, version: FileVersion): Option[Int] =
    if (version.minor >= 2) EncodingParams.scheme(params.dictValuesCompression) else None

  private[writer] def wrap(
      buf: ByteBuf,
      enc: CompressiveEncoding,
      params: EncodingParams,
      version: FileVersion,
      entries: Int
  ): MiniBlockEncoder.Dictionary =
    general(params, version) match {
      case Some(s) =>
        val c =
          GeneralCompressor.compress(s, params.dictValuesLevel.getOrElse(0), buf.array, 0, buf.size)
        val out = new ByteBuf(c.length + 8); out.bytes(c)
        new MiniBlockEncoder.Dictionary(
          out,
          Encodings.general(s, params.dictValuesLevel, enc),
          entries.toLong
        )
      case None => new MiniBlockEncoder.Dictionary(buf, enc, entries.toLong)
    }

  /** Fixed-width entries: bitpacked when 64-bit and it can pay (2.2), else flat, then general compression (2.2). */
  private def fixedBlock(
      dict: ByteBuf,
      w: Int,
      entries: Int,
      params: EncodingParams,
      version: FileVersion
  ): MiniBlockEncoder.Dictionary = {
    val a = dict.array
    if (w == 8) {
      val bw = FastLanesPack.bitWidth(a, 8, 0, entries)
      val tooSmall = entries <= 1024 && 128L * bw >= 8L * entries
      if (bw < 64 && !tooSmall) {
        val out = new ByteBuf(8 * entries + 1024)
        if (entries <= 1024) {
          FastLanesPack.packBlock(a, 8, 0, entries, out)
          return new MiniBlockEncoder.Dictionary(
            out,
            Encodings.inlineBitpacking(64),
            entries.toLong
          )
        }
        FastLanesPack.packOutOfLine(a, 8, 0, entries, bw, out)
        return new MiniBlockEncoder.Dictionary(
          out,
          Encodings.outOfLineBitpacking(64, bw),
          entries.toLong
        )
      }
    }
    wrap(dict, Encodings.flat(w * 8), params, version, entries)
  }

  /** Variable-width entries in the block form: `u32 32 | u32 bytes_start | offsets | bytes` (u64s when large). */
  private[writer] def varBlock(
      dict: ByteBuf,
      offsets: IntBuf,
      entries: Int,
      large: Boolean,
      params: EncodingParams,
      version: FileVersion
  ): MiniBlockEncoder.Dictionary = {
    val ow = if (large) 8 else 4
    val start = 2L * ow + (entries + 1L) * ow
    val out = new ByteBuf((start + dict.size).toInt + 8)
    if (large) { out.u64(64); out.u64(start) }
    else { out.u32(32); out.u32(start) }
    var i = 0
    while (i <= entries) {
      if (large) out.u64(offsets(i).toLong) else out.u32(offsets(i).toLong); i += 1
    }
    out.bytes(dict.array, 0, dict.size)
    wrap(out, Encodings.variable(ow * 8), params, version, entries)
  }
}
