package io.sparklance.format.structural

import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos.FullZipLayout

/**
 * A full-zip page (large values): buffer 0 zips, per item, a control word (rep in the high
 * bits, def in the low bits; 1, 2 or 4 bytes, absent without levels) with the item's value:
 * fixed-width values for every visible item, or for variable width a length prefix and bytes
 * for valid items only. Buffer 1, when present, is the repetition index: rows+1 byte offsets
 * of the rows in buffer 0, so exactly the bytes of the opened rows are read.
 */
private[structural] final class FullZipPage(
    io: PageIO, layout: FullZipLayout, layers: Layers, defMap: Array[Short], pageMaxVisibleDef: Int,
    numRows: Long, rowFrom: Long, rowUntil: Long, ref: PageRef)
  extends LevelPage(layers, defMap, pageMaxVisibleDef, ref) {

  private val bitsRep = layout.getBitsRep
  private val bitsDef = layout.getBitsDef
  ref.check(bitsRep <= 16 && bitsDef <= 16, s"control word of $bitsRep+$bitsDef bits")
  private val cw = if (bitsRep + bitsDef == 0) 0 else if (bitsRep + bitsDef <= 8) 1 else if (bitsRep + bitsDef <= 16) 2 else 4
  private val defMask = (1 << bitsDef) - 1
  private val variable = layout.hasBitsPerOffset
  private val fixedCodec = if (variable) null else Codecs.fixedPerValue(layout.getValueCompression, ref)
  private val varCodec = if (variable) Codecs.varPerValue(layout.getValueCompression, ref) else null
  private val lenBytes = if (variable) {
    val b = layout.getBitsPerOffset
    ref.check(b == 8 || b == 16 || b == 32 || b == 64, s"full-zip length prefix of $b bits"); b / 8
  } else 0
  private val valueBytes = if (variable) 0 else {
    ref.check(layout.getBitsPerValue == fixedCodec.bytesPerValue * 8L,
      s"full-zip values of ${layout.getBitsPerValue} bits but the encoding gives ${fixedCodec.bytesPerValue * 8}")
    fixedCodec.bytesPerValue
  }

  /** Byte range of rows [rowFrom, rowUntil) in buffer 0. */
  private val (byteFrom, byteUntil): (Long, Long) =
    if (io.numBuffers >= 2) {
      val ri = io.bufferSize(1)
      ref.check(ri % (numRows + 1) == 0, s"repetition index of $ri bytes for $numRows rows")
      val w = (ri / (numRows + 1)).toInt
      ref.check(w == 1 || w == 2 || w == 4 || w == 8, s"repetition index entries of $w bytes")
      val s = io.range(1, rowFrom * w, (rowUntil - rowFrom + 1) * w)
      val a = LE.uint(s.a, s.off, w); val b = LE.uint(s.a, s.off + (rowUntil - rowFrom).toInt * w, w)
      ref.check(a >= 0 && a <= b && b <= io.bufferSize(0), s"repetition index range [$a, $b) exceeds the data buffer")
      (a, b)
    } else {
      ref.check(layers.maxRep == 0 && !variable, "a repeated or variable-width full-zip page needs a repetition index")
      val stride = (cw + valueBytes).toLong
      ref.check(stride * numRows <= io.bufferSize(0), s"data buffer of ${io.bufferSize(0)} bytes for $numRows rows of $stride bytes")
      (rowFrom * stride, rowUntil * stride)
    }

  private var loaded = false
  protected def nextChunkContinuesRow: Boolean = false
  protected def nextChunk(): Chunk = {
    if (loaded) return null
    loaded = true
    unzip(io.range(0, byteFrom, byteUntil - byteFrom))
  }

  private def unzip(b: Slice): Chunk = {
    val a = b.a; val end = b.end
    if (cw == 0 && !variable) {
      // No levels: the bytes are the values.
      val n = (rowUntil - rowFrom).toInt
      return new Chunk(null, null, n, fixedCodec.decode(b, n))
    }
    var rep = new Array[Short](1024); var defs = new Array[Short](1024); var n = 0
    val vals = if (variable) null else new java.io.ByteArrayOutputStream()
    var offs = if (variable) new Array[Int](1025) else null
    var nv = 0
    var p = b.off
    var varBytes = new Array[Byte](if (variable) math.max(16, b.len) else 0); var vb = 0
    while (p < end) {
      var r = 0; var d = 0
      if (cw > 0) {
        ref.check(p + cw <= end, "truncated control word")
        val word = LE.uint(a, p, cw).toInt; p += cw
        r = word >>> bitsDef; d = word & defMask
      }
      if (n == rep.length) { rep = java.util.Arrays.copyOf(rep, n * 2); defs = java.util.Arrays.copyOf(defs, n * 2) }
      rep(n) = r.toShort; defs(n) = d.toShort; n += 1
      val visible = d <= pageMaxVisibleDef
      if (visible) {
        if (variable) {
          if (nv + 2 > offs.length) offs = java.util.Arrays.copyOf(offs, offs.length * 2)
          if (d == 0) {
            ref.check(p + lenBytes <= end, "truncated value length")
            val len = LE.uint(a, p, lenBytes); p += lenBytes
            if (len < 0 || len > end - p) throw ref.corrupt(s"value of $len bytes exceeds the page")
            System.arraycopy(a, p, varBytes, vb, len.toInt); vb += len.toInt; p += len.toInt
          }
          nv += 1; offs(nv) = vb
        } else {
          ref.check(p + valueBytes <= end, "truncated fixed-width value")
          vals.write(a, p, valueBytes); p += valueBytes; nv += 1
        }
      }
    }
    val values =
      if (variable) varCodec.decode(new VarValues(nv, offs, 0, varBytes))
      else fixedCodec.decode(Slice.of(vals.toByteArray), nv)
    new Chunk(if (bitsRep > 0) rep else null, if (bitsDef > 0) defs else null, n, values)
  }

  if (rowUntil > rowFrom) cur = nextChunk()
}
