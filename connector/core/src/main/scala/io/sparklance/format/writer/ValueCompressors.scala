package io.sparklance.format.writer

import io.sparklance.format.LogicalType
import io.sparklance.format.codec.{FsstEncoder, GeneralCompression, GeneralCompressor}

/**
 * The value compressor of a page, picked the way pylance 14.0.2's compression strategy picks
 * it (`lance-file` `versions/v2_x/compression.rs`, `lance-encoding` `compression.rs`):
 *
 *  - fixed width in mini-blocks: `compression=none` keeps them flat; with `zstd`/`lz4`, 32 and
 *    64-bit values whose bytes look low-entropy are byte-stream split; else RLE (u8 run lengths)
 *    when it beats both the plain values and the bitpacking estimate, else fastlanes
 *    bitpacking when it saves space, else flat; `zstd`/`lz4` then compress each chunk;
 *    decimal128 values are flat, and LZ4-compressed unless a compression is named (a
 *    departure: pylance leaves them flat);
 *  - strings in mini-blocks: FSST for text (not binary) whose longest value has 5+ bytes and
 *    whose page holds 32 KiB or more (or when `compression=fsst`), kept only when it is
 *    actually smaller unless requested; `zstd`/`lz4` compress each chunk instead;
 *  - strings in full-zip pages: FSST under the same rule, or each value compressed with zstd
 *    when a value exceeds 32 KiB or general compression is requested (pages of 32 KiB+).
 */
private[writer] object ValueCompressors {
  private val FsstMinMaxLen = 5
  private val FsstMinBytes = 32 * 1024
  private val MaxMiniBlockValues = 4096

  /**
   * Mini-block values of fixed width: `a` holds `n` values of `width` bytes (`decimal128`:
   * decimal128 values, LZ4-compressed unless a compression is named).
   */
  def fixed(
      a: Array[Byte],
      width: Int,
      bool: Boolean,
      n: Int,
      params: EncodingParams,
      decimal128: Boolean = false
  ): ChunkValues = {
    val inner =
      if (bool || params.noCompression || !(width == 1 || width == 2 || width == 4 || width == 8))
        new FlatChunks(a, width, bool, n)
      else if (
        params.compression.exists(_ != "none") && (width == 4 || width == 8) && bss(
          a,
          width,
          n,
          params
        )
      ) new BssChunks(a, width, n)
      else {
        val raw = n.toLong * width
        val bitpack = FastLanesPack.packedSize(a, width, 0, n)
        val bitpackPays = bitpack < raw
        val rleAllowed = params.rleThreshold.forall(t => ValueStats.runCount(a, width, n) < n * t)
        // RLE is taken when no larger than bitpacking when that pays, else smaller than raw:
        // its size is counted only until it passes that.
        val rleLimit = if (bitpackPays) bitpack else raw - 1
        val rle =
          if (rleAllowed) ValueStats.rleBytes(a, width, n, MaxMiniBlockValues, rleLimit)
          else Long.MaxValue
        if (rle < raw && !(bitpackPays && bitpack < rle)) new RleChunks(a, width, n)
        else if (bitpackPays) new BitpackChunks(a, width, n)
        else new FlatChunks(a, width, bool, n)
      }
    if (bool) inner
    else general(inner, params, if (decimal128) Some(Decimal128) else None)
  }

  /**
   * The compression of decimal128 values when none is asked for: LZ4 over each chunk, as
   * pylance writes them under `compression=lz4` (its default leaves them flat, 16 bytes a
   * value however small the numbers; LZ4 takes TPC-H's prices to ~5 bytes, Parquet's size).
   * Bitpacking and byte-stream split stop at 64 bits in pylance's reader. Other 16-byte
   * values (fixed-size binaries: UUIDs, hashes) stay flat, as pylance writes them.
   */
  private val Decimal128 = GeneralCompression.Lz4

  /** Byte-stream split under general compression: `lance-encoding:bss` on, or auto and low byte entropy. */
  private def bss(a: Array[Byte], width: Int, n: Int, params: EncodingParams): Boolean =
    params.bss match {
      case "on" => true
      case "off" => false
      case _ => ValueStats.bytePositionEntropy(a, width, n) < 4.0
    }

  /** `inner` under the general scheme named, or `default` when no compression is named. */
  private def general(
      inner: ChunkValues,
      params: EncodingParams,
      default: Option[Int] = None
  ): ChunkValues =
    params.generalScheme.orElse(if (params.compression.isEmpty) default else None) match {
      case Some(s) => new GeneralChunks(inner, s, params.compressionLevel)
      case None => inner
    }

  private def isText(t: LogicalType): Boolean = t match {
    case LogicalType.Binary | LogicalType.LargeBinary | LogicalType.Json => false
    case _ => true
  }

  private def fsstWanted(v: VarValuesBuf, t: LogicalType, params: EncodingParams): Boolean =
    params.fsstRequested || (params.compression.isEmpty && isText(t) && v.maxLen >= FsstMinMaxLen &&
      dataSize(v) >= FsstMinBytes)

  private def dataSize(v: VarValuesBuf): Long =
    v.data.size.toLong + (v.count + 1L) * (if (v.large) 8 else 4)

  /**
   * FSST codes of the page, or None when they would not be smaller (and FSST was not
   * requested); written into `scratch`'s code buffer, which they become.
   */
  private def fsst(
      v: VarValuesBuf,
      params: EncodingParams,
      scratch: PageScratch
  ): Option[FsstEncoder.Compressed] = {
    val n = v.count
    if (n == 0 || v.data.size == 0) return None
    val c = FsstEncoder.compress(v.data.array, v.offsets.array, n, scratch.fsstCodes)
    scratch.fsstCodes = c.codes
    if (params.fsstRequested || c.codeBytes + FsstEncoder.TableBytes < v.data.size) Some(c)
    else None
  }

  /** Mini-block values of variable width (`scratch`: the column's reusable arrays). */
  def variable(
      v: VarValuesBuf,
      t: LogicalType,
      params: EncodingParams,
      scratch: PageScratch
  ): ChunkValues = {
    val n = v.count
    val plain = new VarChunks(v.offsets.array, v.data.array, v.large, n)
    if (params.noCompression) plain
    else if (fsstWanted(v, t, params)) fsst(v, params, scratch) match {
      case Some(c) => new FsstChunks(c.table, new VarChunks(c.offsets, c.codes, v.large, n))
      case None => plain
    }
    else general(plain, params)
  }

  /**
   * Full-zip payload of variable-width values, or null for the plain bytes (`scratch`: the
   * column's reusable arrays).
   */
  def fullZip(
      v: VarValuesBuf,
      t: LogicalType,
      params: EncodingParams,
      scratch: PageScratch
  ): FullZipEncoder.VarPayload = {
    if (params.noCompression) return null
    val bits = if (v.large) 64 else 32
    val perValue = v.maxLen > 32 * 1024 || params.generalScheme.nonEmpty
    if (perValue && dataSize(v) >= FsstMinBytes) {
      // pylance compresses each value with zstd here, whatever general scheme was named.
      val level = if (params.compression.contains("zstd")) params.compressionLevel else None
      val n = v.count
      val offs = new Array[Int](n + 1)
      val out = new ByteBuf(v.data.size / 2 + 64)
      var i = 0
      while (i < n) {
        val s = v.offsets(i)
        val c = GeneralCompressor.compress(
          GeneralCompression.Zstd,
          level.getOrElse(0),
          v.data.array,
          s,
          v.offsets(i + 1) - s
        )
        out.bytes(c); offs(i + 1) = out.size
        i += 1
      }
      // pylance records the level it used, 0 (zstd's default) when none was named.
      new FullZipEncoder.VarPayload(
        offs,
        out.array,
        Encodings.general(
          GeneralCompression.Zstd,
          Some(level.getOrElse(0)),
          Encodings.variable(bits)
        )
      )
    } else if (fsstWanted(v, t, params)) fsst(v, params, scratch) match {
      case Some(c) => new FullZipEncoder.VarPayload(
          c.offsets,
          c.codes,
          Encodings.fsst(c.table, Encodings.variable(bits))
        )
      case None => null
    }
    else null
  }
}
