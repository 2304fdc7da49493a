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
    io: PageIO,
    layout: FullZipLayout,
    layers: Layers,
    defMap: Array[Short],
    pageMaxVisibleDef: Int,
    numRows: Long,
    rowFrom: Long,
    rowUntil: Long,
    ref: PageRef
) extends LevelPage(layers, defMap, pageMaxVisibleDef, ref) {

  private val bitsRep = layout.getBitsRep
  private val bitsDef = layout.getBitsDef
  ref.check(bitsRep <= 16 && bitsDef <= 16, s"control word of $bitsRep+$bitsDef bits")
  private val cw = if (bitsRep + bitsDef == 0) 0
  else if (bitsRep + bitsDef <= 8) 1
  else if (bitsRep + bitsDef <= 16) 2
  else 4
  private val defMask = (1 << bitsDef) - 1
  private val variable = layout.hasBitsPerOffset
  private val fixedCodec =
    if (variable) null else Codecs.fixedPerValue(layout.getValueCompression, ref)
  private val varCodec = if (variable) Codecs.varPerValue(layout.getValueCompression, ref) else null
  private val lenBytes = if (variable) {
    val b = layout.getBitsPerOffset
    ref.check(b == 8 || b == 16 || b == 32 || b == 64, s"full-zip length prefix of $b bits"); b / 8
  } else 0
  private val valueBytes = if (variable) 0
  else {
    ref.check(
      layout.getBitsPerValue == fixedCodec.bytesPerValue * 8L,
      s"full-zip values of ${layout.getBitsPerValue} bits but the encoding gives ${fixedCodec.bytesPerValue * 8}"
    )
    fixedCodec.bytesPerValue
  }

  /**
   * Where the rows of the opened range start in buffer 0. Without a repetition index every
   * row is `stride` bytes; with one, `index` holds its entries for rows [rowFrom, rowUntil].
   */
  private val stride = (cw + valueBytes).toLong
  private val (index, indexWidth): (Slice, Int) =
    if (io.numBuffers >= 2) {
      val ri = io.bufferSize(1)
      ref.check(ri % (numRows + 1) == 0, s"repetition index of $ri bytes for $numRows rows")
      val w = (ri / (numRows + 1)).toInt
      ref.check(w == 1 || w == 2 || w == 4 || w == 8, s"repetition index entries of $w bytes")
      (io.range(1, rowFrom * w, (rowUntil - rowFrom + 1) * w), w)
    } else {
      ref.check(
        layers.maxRep == 0 && !variable,
        "a repeated or variable-width full-zip page needs a repetition index"
      )
      ref.check(
        stride * numRows <= io.bufferSize(0),
        s"data buffer of ${io.bufferSize(0)} bytes for $numRows rows of $stride bytes"
      )
      (null, 0)
    }

  /** Byte offset in buffer 0 of row `rowFrom + i`, for i in [0, rowUntil - rowFrom]. */
  private def rowStart(i: Int): Long =
    if (index == null) (rowFrom + i) * stride
    else LE.uint(index.a, index.off + i * indexWidth, indexWidth)

  private val totalRows = (rowUntil - rowFrom).toInt
  locally {
    val a = rowStart(0); val b = rowStart(totalRows)
    ref.check(
      a >= 0 && a <= b && b <= io.bufferSize(0),
      s"repetition index range [$a, $b) exceeds the data buffer"
    )
  }

  // The opened range is read in windows of whole rows of about WindowBytes each, not at once:
  // pylance's full-zip pages of large values hold hundreds of MB (262,144 vectors of 512 bytes
  // in one page), and a single read of that size would allocate a humongous array and decode
  // nothing until it has arrived.
  private var nextRow = 0

  protected def nextChunkContinuesRow: Boolean = false
  protected def nextChunk(): Chunk = {
    if (nextRow >= totalRows) return null
    val first = nextRow
    val from = rowStart(first)
    var last = first + 1
    if (index == null) last = math.min(
      totalRows.toLong,
      first + math.max(1L, FullZipPage.WindowBytes / math.max(1L, stride))
    ).toInt
    else while (last < totalRows && rowStart(last + 1) - from <= FullZipPage.WindowBytes) last += 1
    nextRow = last
    val until = rowStart(last)
    ref.check(from <= until, s"repetition index goes backwards at row ${rowFrom + first}")
    unzip(io.range(0, from, until - from), last - first)
  }

  /** Levels and values of `rows` whole rows zipped in `b`. */
  private def unzip(b: Slice, rows: Int): Chunk = {
    val a = b.a; val end = b.end
    if (cw == 0 && !variable)
      return new Chunk(
        null,
        null,
        rows,
        fixedCodec.decode(b, rows)
      ) // no levels: the bytes are the values
    var rep = new Array[Short](1024); var defs = new Array[Short](1024); var n = 0
    val vals =
      if (variable) null else new Array[Byte](b.len) // values never outnumber the window's bytes
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
      if (n == rep.length) {
        rep = java.util.Arrays.copyOf(rep, n * 2); defs = java.util.Arrays.copyOf(defs, n * 2)
      }
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
          System.arraycopy(a, p, vals, nv * valueBytes, valueBytes); p += valueBytes; nv += 1
        }
      }
    }
    // A window must hold exactly its rows, starting at a row: otherwise a corrupt repetition
    // index would shift rows silently from one window to the next.
    val starts = if (bitsRep == 0) n
    else {
      var k = 0; var i = 0; val m = layers.maxRep
      while (i < n) { if (rep(i) == m) k += 1; i += 1 }
      if (n > 0 && rep(0) != m) -1 else k
    }
    ref.check(
      starts == rows,
      s"a window the repetition index gives $rows rows holds ${math.max(starts, 0)} row starts"
    )
    val values =
      if (variable) varCodec.decode(new VarValues(nv, offs, 0, varBytes))
      else fixedCodec.decode(new Slice(vals, 0, nv * valueBytes), nv)
    new Chunk(if (bitsRep > 0) rep else null, if (bitsDef > 0) defs else null, n, values)
  }

  /**
   * Skips without reading: the rest of the current window is walked (it is in memory), whole
   * windows after it are never read, since a window always starts at a row.
   */
  override def skip(k: Int): Unit = {
    var left = k
    if (cur != null && !cur.exhausted) {
      val t = math.min(left, rowsLeftIn(cur)); walk(t, null); left -= t
    }
    if (left > 0) {
      if (left > totalRows - nextRow)
        throw ref.corrupt(s"page ends ${left - (totalRows - nextRow)} rows early")
      nextRow += left; cur = null
    }
  }

  private def rowsLeftIn(c: Chunk): Int =
    if (c.rep == null) c.nLevels - c.pos
    else {
      var rows = 0; var i = c.pos; val r = c.rep; val m = layers.maxRep
      while (i < c.nLevels) { if (r(i) == m) rows += 1; i += 1 }
      rows
    }
}

private[structural] object FullZipPage {

  /** Bytes of buffer 0 read and unzipped at a time (at least one row). */
  val WindowBytes: Long = 4L << 20
}
