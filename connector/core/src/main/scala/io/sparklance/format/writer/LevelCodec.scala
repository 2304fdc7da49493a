package io.sparklance.format.writer

import io.sparklance.proto.EncodingsV21Protos._

/**
 * How the u16 rep or def levels of a page are compressed: chosen once per page from all its
 * levels, as pylance's block compressor choice does, then applied to each mini-block chunk's
 * levels (or to the whole page for a constant layout).
 *
 * pylance 14.0.2 picks, for 2.1: fastlanes bitpacking (`InlineBitpacking(16)` for pages of
 * at most 1024 levels, `OutOfLineBitpacking(16, Flat W)` otherwise) unless it cannot save
 * space, else plain 16-bit levels; 2.2 first tries RLE (u8 run lengths) when it beats both
 * the plain levels and the bitpacking estimate.
 */
private[writer] sealed abstract class LevelCodec {
  def encoding: CompressiveEncoding

  /** Bytes of the levels `[from, until)` once encoded. */
  def size(lv: Array[Short], from: Int, until: Int): Long
  def encode(lv: Array[Short], from: Int, until: Int): ByteBuf
}

private[writer] object LevelCodec {
  object Plain extends LevelCodec {
    val encoding: CompressiveEncoding = Encodings.flat(16)
    def size(lv: Array[Short], from: Int, until: Int): Long = 2L * (until - from)
    def encode(lv: Array[Short], from: Int, until: Int): ByteBuf =
      LevelRle.levels(lv, rle = false, from, until)
  }

  object Rle extends LevelCodec {
    val encoding: CompressiveEncoding = Encodings.levelRle
    def size(lv: Array[Short], from: Int, until: Int): Long = LevelRle.encodedSize(lv, from, until)
    def encode(lv: Array[Short], from: Int, until: Int): ByteBuf =
      LevelRle.levels(lv, rle = true, from, until)
  }

  /** One 1024-level block per chunk, with its own width (pages of at most 1024 levels). */
  object InlineBitpack extends LevelCodec {
    val encoding: CompressiveEncoding = Encodings.inlineBitpacking(16)
    def size(lv: Array[Short], from: Int, until: Int): Long = 2L + 128L * bitWidth(lv, from, until)
    def encode(lv: Array[Short], from: Int, until: Int): ByteBuf = {
      val out = new ByteBuf(2 + 128 * 16)
      FastLanesPack.packBlock(bytes(lv, from, until), 2, 0, until - from, out)
      out
    }
  }

  /** Every block at the page's widest width `w`. */
  final class OutOfLineBitpack(w: Int) extends LevelCodec {
    val encoding: CompressiveEncoding = Encodings.outOfLineBitpacking(16, w)
    def size(lv: Array[Short], from: Int, until: Int): Long =
      FastLanesPack.outOfLineSize(2, until - from, w)
    def encode(lv: Array[Short], from: Int, until: Int): ByteBuf = {
      val out = new ByteBuf(size(lv, from, until).toInt + 8)
      FastLanesPack.packOutOfLine(bytes(lv, from, until), 2, 0, until - from, w, out)
      out
    }
  }

  private def bytes(lv: Array[Short], from: Int, until: Int): Array[Byte] = {
    val b = new Array[Byte](2 * (until - from))
    var i = from
    while (i < until) {
      io.sparklance.format.codec.LittleEndian.putI16(b, 2 * (i - from), lv(i)); i += 1
    }
    b
  }

  private def bitWidth(lv: Array[Short], from: Int, until: Int): Int = {
    var or = 0; var i = from
    while (i < until) { or |= lv(i) & 0xffff; i += 1 }
    32 - Integer.numberOfLeadingZeros(or)
  }

  /** The codec pylance would pick for the `n` levels of a page. */
  def choose(lv: Array[Short], n: Int, version: FileVersion): LevelCodec = {
    val raw = 2L * n
    val w = bitWidth(lv, 0, n)
    // Bitpacking, as the block compressor would apply it (None when it cannot pay).
    val bitpack: Option[LevelCodec] =
      if (n == 0 || w >= 16) None
      else if (n <= 1024) { if (128L * w >= raw) None else Some(InlineBitpack) }
      else Some(new OutOfLineBitpack(w))
    if (version.minor >= 2 && n > 0) {
      val rle = LevelRle.encodedSize(lv, 0, n)
      val bitpackEstimate: Option[Long] =
        if (w >= 16) None
        else {
          val b = if (n <= 1024) 2L * (1 + 64L * w) else FastLanesPack.outOfLineSize(2, n, w)
          if (b >= raw) None else Some(b)
        }
      if (rle < raw && !bitpackEstimate.exists(_ < rle)) return Rle
    }
    bitpack.getOrElse(Plain)
  }
}
