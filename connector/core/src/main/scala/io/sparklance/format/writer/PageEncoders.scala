package io.sparklance.format.writer

import io.sparklance.proto.EncodingsV21Protos._

/**
 * Mini-block pages: values cut into chunks of a power-of-two count (the last chunk takes
 * the rest), each chunk carrying the levels up to and including its last value; trailing
 * invisible levels go with the next chunk, as the reference writer slices them. Every piece
 * of a chunk is padded to 8 bytes. Lists add a repetition index: per chunk, the rows that
 * finish in it and the items left over after the last finished row.
 */
private[writer] object MiniBlockEncoder {
  private val TargetValueBytes = 8 * 1024 - 6
  private val MaxChunkBytes = 32 * 1024

  private def pad8(n: Long): Long = (n + 7) & ~7L

  /** A page dictionary: its block-encoded buffer, that encoding and its entry count. */
  final class Dictionary(val buffer: ByteBuf, val encoding: CompressiveEncoding, val entries: Long)

  /**
   * Writes the page with `vals` (the values, or the dictionary indices when `dict` is set).
   * False when some chunk cannot fit the grammar (too many levels between values).
   */
  def write(w: LeafPage, levels: PageLevels, vals: ChunkValues, dict: Dictionary): Boolean = {
    val lp = w.leafPath
    val n = vals.count
    val nLevels = w.levelCount
    val rep = w.repLevels
    val canon = w.canonicalDefs
    val pageDefs = levels.pageDefs(canon, 0, nLevels)
    val hasRep = rep != null
    val hasDef = pageDefs != null
    val levelBufs = (if (hasRep) 1 else 0) + (if (hasDef) 1 else 0)
    // Levels are compressed per chunk with one codec chosen over the page, as pylance does.
    val repCodec = if (hasRep) LevelCodec.choose(rep, nLevels, w.fileVersion) else null
    val defCodec = if (hasDef) LevelCodec.choose(pageDefs, nLevels, w.fileVersion) else null
    // Level position of each visible value (none when every level is a value: its own).
    val valueLevel: Array[Int] =
      if (canon == null || n == nLevels) null
      else {
        val a = new Array[Int](n); var v = 0; var i = 0; val mv = lp.maxVisibleDef
        while (i < nLevels) { if (canon(i) <= mv) { a(v) = i; v += 1 }; i += 1 }
        a
      }
    def levelEnd(lastValue: Int): Int =
      if (valueLevel == null) lastValue + 1 else valueLevel(lastValue) + 1
    val minK = vals.minValues
    val numBuffers = vals.numBuffers
    val maxValues = vals.maxValues
    // The value bytes of the chunk [[fits]] last accepted: the plan's size, counted once.
    var fitBytes = 0L
    def fits(vs: Int, k: Int, levelStart: Int, last: Boolean): Boolean = {
      val lv = if (last) nLevels - levelStart else levelEnd(vs + k - 1) - levelStart
      if (levelBufs > 0 && lv > 65535) return false
      val rb = if (hasRep) repCodec.size(rep, levelStart, levelStart + lv) else 0L
      val db = if (hasDef) defCodec.size(pageDefs, levelStart, levelStart + lv) else 0L
      if (rb > 65535 || db > 65535) return false
      val vb = vals.bytes(vs, k)
      val header = pad8(2 + 2 * levelBufs + (if (w.isLarge) 4 else 2) * numBuffers)
      val total = header + pad8(rb) + pad8(db) + vb + 8 * numBuffers
      val ok = (vb <= TargetValueBytes || k <= minK) && total <= MaxChunkBytes &&
        (w.isLarge || vb <= 65535)
      if (ok) fitBytes = vb
      ok
    }

    // Plan the chunks: four ints each (first value, count, first level, level count).
    val plan = new IntBuf(64)
    var vs = 0; var ls = 0
    var planned = 0L
    while (vs < n) {
      val rem = n - vs
      val k =
        if (rem <= maxValues && fits(vs, rem, ls, last = true)) rem
        else {
          var k = Integer.highestOneBit(math.min(rem, maxValues))
          if (k == rem && !fits(vs, k, ls, last = true)) k /= 2
          while (k >= minK && !fits(vs, k, ls, last = false)) k /= 2
          if (k < minK || k < 2) return false
          k
        }
      val isLast = vs + k == n
      val le = if (isLast) nLevels else levelEnd(vs + k - 1)
      plan.add(vs); plan.add(k); plan.add(ls); plan.add(le - ls)
      planned += fitBytes + 8L * (numBuffers + levelBufs + 2) +
        (if (levelBufs > 0) 4L * (le - ls) else 0L)
      vs += k; ls = le
    }

    val numChunks = plan.size / 4
    val meta = new ByteBuf(numChunks * 4 + 8)
    // Sized for the planned chunks up front (values, headers, levels, padding): growing from
    // a small buffer copied every page twice over.
    val data = w.pageBuffer(math.min(Int.MaxValue - 16L, math.max(64L * 1024, planned)).toInt)
    val repIndex = if (hasRep) new ByteBuf(16 * numChunks + 8) else null
    var prevRows = 0L; var prevLeft = 0L
    val maxRep = lp.maxRep.toShort
    var c = 0
    while (c < numChunks) {
      val cvs = plan(4 * c); val k = plan(4 * c + 1); val cls = plan(4 * c + 2)
      val cl = plan(4 * c + 3)
      val last = c == numChunks - 1
      val start = data.size
      val bufs = vals.buffers(cvs, k)
      val repBuf = if (hasRep) repCodec.encode(rep, cls, cls + cl) else null
      val defBuf = if (hasDef) defCodec.encode(pageDefs, cls, cls + cl) else null
      if ((repBuf != null && repBuf.size > 65535) || (defBuf != null && defBuf.size > 65535))
        return false
      data.u16(if (levelBufs > 0) cl else 0)
      if (hasRep) data.u16(repBuf.size)
      if (hasDef) data.u16(defBuf.size)
      bufs.foreach(b => if (w.isLarge) data.u32(b.size.toLong) else data.u16(b.size))
      data.pad(8, ContainerWriter.Pad)
      if (hasRep) { data.bytes(repBuf.array, 0, repBuf.size); data.pad(8, ContainerWriter.Pad) }
      if (hasDef) { data.bytes(defBuf.array, 0, defBuf.size); data.pad(8, ContainerWriter.Pad) }
      bufs.foreach { b => data.bytes(b.array, 0, b.size); data.pad(8, ContainerWriter.Pad) }
      val bytes = data.size - start
      if (!w.isLarge && (bytes > MaxChunkBytes || bufs.exists(_.size > 65535))) return false
      val log = if (last) 0 else Integer.numberOfTrailingZeros(k)
      val word = ((bytes / 8 - 1).toLong << 4) | log
      if (w.isLarge) meta.u32(word) else meta.u16(word.toInt)
      if (hasRep) {
        var rows = 0L; var i = 1
        while (i < cl) { if (rep(cls + i) == maxRep) rows += 1; i += 1 }
        val left: Long =
          if (last) 0L
          else {
            var p = cl - 1
            while (p >= 0 && rep(cls + p) != maxRep) p -= 1
            if (p < 0) cl.toLong else (cl - p).toLong
          }
        if (c > 0 && rep(cls) == maxRep && prevLeft != 0) { prevRows += 1; prevLeft = 0 }
        if (c > 0) { repIndex.u64(prevRows); repIndex.u64(prevLeft) }
        if (last) rows += 1
        prevRows = rows; prevLeft = left
      }
      c += 1
    }
    if (hasRep && numChunks > 0) { repIndex.u64(prevRows); repIndex.u64(prevLeft) }

    val b = MiniBlockLayout.newBuilder()
    if (hasRep) b.setRepCompression(repCodec.encoding)
    if (hasDef) b.setDefCompression(defCodec.encoding)
    b.setValueCompression(vals.encoding)
    if (dict != null) b.setDictionary(dict.encoding).setNumDictionaryItems(dict.entries)
    levels.layers.foreach(b.addLayers)
    b.setNumBuffers(numBuffers.toLong)
    b.setRepetitionIndexDepth(if (hasRep) 1 else 0)
    b.setNumItems(n.toLong)
    b.setHasLargeChunk(w.isLarge)
    val buffers =
      Seq(meta, data) ++ (if (dict != null) Seq(dict.buffer) else Nil) ++ (if (hasRep) Seq(repIndex)
                                                                           else Nil)
    w.emit(buffers, PageLayout.newBuilder().setMiniBlockLayout(b).build())
    true
  }

  /** LSB-first bitmap of one-byte booleans `src[from, from + n)`. */
  def bitmap(src: Array[Byte], from: Int, n: Int, out: ByteBuf): Unit = {
    var i = 0
    while (i < n) {
      var byte = 0; var bit = 0
      while (bit < 8 && i + bit < n) { if (src(from + i + bit) != 0) byte |= (1 << bit); bit += 1 }
      out.u8(byte); i += 8
    }
  }
}

/**
 * Full-zip pages (values of 256 bytes or more): per level, a control word (rep in the high
 * bits, def in the low bits) zipped with the value of each visible item: the fixed bytes
 * (a nullable fixed-size list puts its item validity bitmap first), or for variable width a
 * u32/u64 length and the bytes of valid items only. Variable-width or repeated pages add a
 * repetition index of rows + 1 byte offsets.
 */
private[writer] object FullZipEncoder {
  private def bitsFor(max: Int): Int = if (max <= 0) 0 else 32 - Integer.numberOfLeadingZeros(max)

  /**
   * Variable-width values as stored per value: `offsets` (n + 1) into `data`, and the
   * encoding describing them (plain `Variable`, `Fsst` codes or `General` per value).
   */
  final class VarPayload(
      val offsets: Array[Int],
      val data: Array[Byte],
      val encoding: CompressiveEncoding
  )

  def write(w: LeafPage, levels: PageLevels, payload: VarPayload): Unit = {
    val lp = w.leafPath
    val vals = w.pageValues
    val nLevels = w.levelCount
    val rep = w.repLevels
    val canon = w.canonicalDefs
    val pageDefs = levels.pageDefs(canon, 0, nLevels)
    val maxRepSeen = if (rep == null) 0
    else { var m = 0; var i = 0; while (i < nLevels) { m = math.max(m, rep(i).toInt); i += 1 }; m }
    val maxDefSeen = if (pageDefs == null) 0
    else {
      var m = 0; var i = 0; while (i < nLevels) { m = math.max(m, pageDefs(i).toInt); i += 1 }; m
    }
    val bitsRep = bitsFor(maxRepSeen); val bitsDef = bitsFor(maxDefSeen)
    val cw = if (bitsRep + bitsDef == 0) 0
    else if (bitsRep + bitsDef <= 8) 1
    else if (bitsRep + bitsDef <= 16) 2
    else 4
    val variable = vals.isInstanceOf[VarValuesBuf]
    val withIndex = variable || rep != null
    val large = vals match { case v: VarValuesBuf => v.large; case _ => false }
    val (vOffsets, vData) = vals match {
      case v: VarValuesBuf =>
        if (payload != null) (payload.offsets, payload.data) else (v.offsets.array, v.data.array)
      case _ => (null, null)
    }
    val payloadBytes =
      if (vOffsets != null) (vOffsets(vals.count) - vOffsets(0)).toLong else vals.bytes
    val out = w.pageBuffer(
      math.max(1024L, payloadBytes + nLevels.toLong * (cw + 8)).min(Int.MaxValue - 64).toInt
    )
    val rowStarts = if (withIndex) new Array[Long](w.pageRows.toInt + 1) else null
    var row = 0
    var v = 0
    val mv = lp.maxVisibleDef
    val maxRep = lp.maxRep
    var i = 0
    while (i < nLevels) {
      if (withIndex && (rep == null || rep(i) == maxRep)) { rowStarts(row) = out.size; row += 1 }
      if (cw > 0) {
        val r = if (rep == null) 0 else rep(i).toInt
        val d = if (pageDefs == null) 0 else pageDefs(i).toInt
        val word = (r << bitsDef) | d
        cw match { case 1 => out.u8(word); case 2 => out.u16(word); case _ => out.u32(word.toLong) }
      }
      val cd = if (canon == null) 0 else canon(i)
      if (cd <= mv) {
        vals match {
          case f: FixedValuesBuf => out.bytes(f.data.array, v * f.width, f.width)
          case l: FslValuesBuf =>
            if (l.anyItemNull) MiniBlockEncoder.bitmap(l.itemValid.array, v * l.dim, l.dim, out)
            out.bytes(l.data.array, v * l.width, l.width)
          case _: VarValuesBuf =>
            if (cd == 0) {
              val st = vOffsets(v); val len = vOffsets(v + 1) - st
              if (large) out.u64(len.toLong) else out.u32(len.toLong)
              out.bytes(vData, st, len)
            }
          case _: NullValuesBuf => LeafValues.noValues
        }
        v += 1
      }
      i += 1
    }
    val b = FullZipLayout.newBuilder().setBitsRep(bitsRep).setBitsDef(bitsDef)
    vals match {
      case f: FixedValuesBuf =>
        b.setBitsPerValue(f.width * 8).setValueCompression(Encodings.flat(f.width * 8))
      case l: FslValuesBuf =>
        val validityBits = if (l.anyItemNull) ((l.dim + 7) / 8) * 8 else 0
        b.setBitsPerValue(l.width * 8 + validityBits)
          .setValueCompression(Encodings.fsl(l.dim, l.anyItemNull, Encodings.flat(l.itemWidth * 8)))
      case _: VarValuesBuf =>
        val bits = if (large) 64 else 32
        b.setBitsPerOffset(bits).setValueCompression(if (payload != null) payload.encoding
        else Encodings.variable(bits))
      case _: NullValuesBuf => LeafValues.noValues
    }
    b.setNumItems(if (rep != null) nLevels else vals.count).setNumVisibleItems(vals.count)
    levels.layers.foreach(b.addLayers)
    val buffers =
      if (!withIndex) Seq(out)
      else {
        rowStarts(row) = out.size
        val total = out.size.toLong
        val width =
          if (total <= 0xffL) 1 else if (total <= 0xffffL) 2 else if (total <= 0xffffffffL) 4 else 8
        val idx = new ByteBuf((row + 1) * width + 8)
        var r = 0
        while (r <= row) {
          width match {
            case 1 => idx.u8(rowStarts(r).toInt); case 2 => idx.u16(rowStarts(r).toInt);
            case 4 => idx.u32(rowStarts(r)); case _ => idx.u64(rowStarts(r))
          }
          r += 1
        }
        Seq(out, idx)
      }
    w.emit(buffers, PageLayout.newBuilder().setFullZipLayout(b).build())
  }
}

/**
 * Run-length encoding of u16 levels in the block form Lance reads for mini-block rep/def:
 * `u64 value_bytes | u16 run values | u8 run lengths` (runs longer than 255 are split).
 */
private[writer] object LevelRle {
  private def runs(lv: Array[Short], from: Int, until: Int): Int = {
    var r = 0; var i = from
    while (i < until) {
      val v = lv(i); var len = 0
      while (i < until && lv(i) == v && len < 255) { i += 1; len += 1 }
      r += 1
    }
    r
  }

  def encodedSize(lv: Array[Short], from: Int, until: Int): Long = 8L + 3L * runs(lv, from, until)

  /** The levels `[from, until)`, RLE-encoded or plain. */
  def levels(lv: Array[Short], rle: Boolean, from: Int, until: Int): ByteBuf = {
    val out = new ByteBuf(2 * (until - from) + 16)
    if (!rle) { var i = from; while (i < until) { out.u16(lv(i)); i += 1 }; return out }
    val vals = new ByteBuf(256); val lens = new ByteBuf(128)
    var i = from
    while (i < until) {
      val v = lv(i); var len = 0
      while (i < until && lv(i) == v && len < 255) { i += 1; len += 1 }
      vals.u16(v); lens.u8(len)
    }
    out.u64(vals.size.toLong)
    out.bytes(vals.array, 0, vals.size)
    out.bytes(lens.array, 0, lens.size)
    out
  }
}
