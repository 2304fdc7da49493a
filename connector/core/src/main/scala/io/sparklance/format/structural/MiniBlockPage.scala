package io.sparklance.format.structural

import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos.MiniBlockLayout

import scala.jdk.CollectionConverters._

/**
 * A mini-block page: small chunks (power-of-two value counts but the last), each holding its
 * own rep/def levels and value buffers, described by one metadata word per chunk (u16 in 2.1,
 * u32 in 2.2: low 4 bits log2(values), the rest bytes/8 - 1).
 *
 * Only the chunks covering the opened row range are read, in one ranged read. Without lists
 * the chunk of a row follows from the value counts; with lists the repetition index (rows
 * completed and leftover items per chunk) locates the chunk where the first row starts, so a
 * scan never decodes from the page start to skip rows.
 */
private[structural] final class MiniBlockPage(
    io: PageIO,
    layout: MiniBlockLayout,
    minor: Int,
    layers: Layers,
    defMap: Array[Short],
    pageMaxVisibleDef: Int,
    numRows: Long,
    rowFrom: Long,
    rowUntil: Long,
    ref: PageRef
) extends LevelPage(layers, defMap, pageMaxVisibleDef, ref) {

  private val large = layout.getHasLargeChunk
  if (minor >= 2)
    ref.check(large, "a 2.2 mini-block page must use the u32 chunk grammar (has_large_chunk)")
  else ref.check(!large, "a 2.1 mini-block page cannot use the u32 chunk grammar (has_large_chunk)")

  private val numBuffers = layout.getNumBuffers.toInt
  private val repCodec =
    if (layout.hasRepCompression) Codecs.block(layout.getRepCompression, ref) else null
  private val defCodec =
    if (layout.hasDefCompression) Codecs.block(layout.getDefCompression, ref) else null
  private val valueCodec = Codecs.miniBlock(layout.getValueCompression, ref)
  ref.check(
    valueCodec.numBuffers == numBuffers || layout.hasDictionary && numBuffers >= 1,
    s"page declares $numBuffers value buffers but its encoding uses ${valueCodec.numBuffers}"
  )
  private val numItems = layout.getNumItems
  private val depth = layout.getRepetitionIndexDepth

  private var chunkMeta: Slice = null
  // Chunk table from the metadata words (a loop in the companion, so it runs compiled, not
  // in the interpreter as the body of a constructor called once per page would).
  private val numChunks: Int = {
    val m = io.buffer(0)
    val w = if (large) 4 else 2
    ref.check(m.len % w == 0, s"chunk metadata of ${m.len} bytes is not whole ${w}-byte words")
    chunkMeta = m
    m.len / w
  }
  private val chunkStart = new Array[Long](numChunks + 1)
  private val itemStart = new Array[Long](numChunks + 1)
  locally {
    val bad = MiniBlockPage.chunkTable(chunkMeta, large, numChunks, numItems, chunkStart, itemStart)
    if (bad >= 0) {
      val i = bad >>> 2
      bad & 3 match {
        case 0 => throw ref.corrupt(s"non-final chunk $i has a value count of 2^0")
        case 1 => throw ref.corrupt(s"chunks hold more values than the page's $numItems")
        case _ => throw ref.corrupt("last chunk's value count does not match the page")
      }
    }
    chunkMeta = null
    ref.check(numChunks > 0 || numItems == 0, "page has values but no chunks")
    ref.check(
      chunkStart(numChunks) <= io.bufferSize(1),
      s"chunks span ${chunkStart(numChunks)} bytes but the data buffer has ${io.bufferSize(1)}"
    )
  }

  private val dictionary: Values =
    if (!layout.hasDictionary) null
    else {
      ref.check(io.numBuffers >= 3, "dictionary page without a dictionary buffer")
      val n = layout.getNumDictionaryItems
      ref.check(n >= 0 && n < Int.MaxValue, s"dictionary of $n items")
      Codecs.block(layout.getDictionary, ref).decode(io.buffer(2), n.toInt)
    }

  // Rows starting in chunks before chunk i (repetition index), and whether chunk i ends mid-row.
  private val (rowStarts, trailer): (Array[Long], Array[Boolean]) =
    if (layers.maxRep == 0 || depth == 0) (null, null)
    else {
      val ri = io.buffer(io.numBuffers - 1)
      val stride = (depth + 1) * 8
      ref.check(
        ri.len == numChunks.toLong * stride,
        s"repetition index of ${ri.len} bytes for $numChunks chunks of depth $depth"
      )
      val starts = new Array[Long](numChunks + 1); val tr = new Array[Boolean](numChunks)
      var pre = false; var i = 0
      while (i < numChunks) {
        val ends = LE.i64(ri.a, ri.off + i * stride);
        val partial = LE.i64(ri.a, ri.off + i * stride + 8)
        tr(i) = partial > 0
        starts(i + 1) = starts(i) + ends + (if (tr(i)) 1 else 0) - (if (pre) 1 else 0)
        pre = tr(i); i += 1
      }
      (starts, tr)
    }

  private def chunkOfItem(item: Long): Int = {
    var i = java.util.Arrays.binarySearch(itemStart, 0, numChunks + 1, item)
    if (i < 0) i = -i - 2
    while (i < numChunks - 1 && itemStart(i + 1) == item) i += 1
    math.min(math.max(i, 0), numChunks - 1)
  }
  private def chunkOfRow(row: Long): Int = {
    // The chunk in which `row` starts: the last chunk with rowStarts(c) <= row whose own starts cover it.
    var i = java.util.Arrays.binarySearch(rowStarts, 0, numChunks + 1, row)
    if (i < 0) i = -i - 2
    else { while (i < numChunks && rowStarts(i + 1) == row) i += 1 }
    math.min(math.max(i, 0), numChunks - 1)
  }

  // The chunk range this scan needs, and the bytes of it.
  private val (firstChunk, lastChunk): (Int, Int) =
    if (numChunks == 0) (0, -1)
    else if (layers.maxRep == 0)
      (chunkOfItem(rowFrom), chunkOfItem(math.max(rowFrom, rowUntil - 1)))
    else if (rowStarts == null) (0, numChunks - 1)
    else {
      var last = chunkOfRow(math.max(rowFrom, rowUntil - 1))
      while (last < numChunks - 1 && trailer(last)) last += 1
      (chunkOfRow(rowFrom), last)
    }
  private val data: Slice =
    if (lastChunk < firstChunk) null
    else io.range(1, chunkStart(firstChunk), chunkStart(lastChunk + 1) - chunkStart(firstChunk))
  private var nextIdx = firstChunk

  /** Page row the cursor stands on. */
  private var rowPos = rowFrom

  override def read(k: Int, out: LeafBatch): Unit = { walk(k, out); rowPos += k }

  /**
   * Skips within the current chunk by walking its levels; a target row in a later chunk is
   * reached by decoding that chunk alone (found from value counts, or from the repetition
   * index under lists), never the chunks in between.
   */
  override def skip(k: Int): Unit = {
    val target = rowPos + k
    val c =
      if (numChunks == 0 || k == 0) -1
      else if (layers.maxRep == 0) chunkOfItem(target)
      else if (rowStarts != null) chunkOfRow(target)
      else -1
    if (c > nextIdx - 1 && c <= lastChunk) {
      val chunk = decodeChunk(c)
      nextIdx = c + 1
      position(chunk, c, target)
    } else walk(k, null)
    rowPos = target
  }

  protected def nextChunkContinuesRow: Boolean =
    nextIdx <= lastChunk && (trailer == null || trailer(nextIdx - 1))

  protected def nextChunk(): Chunk = {
    if (nextIdx > lastChunk) return null
    val i = nextIdx
    val c = decodeChunk(i)
    nextIdx += 1
    if (i == firstChunk) position(c, i, rowFrom)
    c
  }

  private def truncated(i: Int, size: Int) = ref.corrupt(s"chunk $i of $size bytes is truncated")

  private def decodeChunk(i: Int): Chunk = {
    val base = (chunkStart(i) - chunkStart(firstChunk)).toInt
    val size = (chunkStart(i + 1) - chunkStart(i)).toInt
    val a = data.a; val start = data.off + base; val end = start + size
    val items = (itemStart(i + 1) - itemStart(i)).toInt
    var p = start
    if (p + 2 > end) throw truncated(i, size)
    val declared = LE.u16(a, p); p += 2
    var repSize = -1; var defSize = -1
    if (repCodec != null) {
      if (p + 2 > end) throw truncated(i, size); repSize = LE.u16(a, p); p += 2
    }
    if (defCodec != null) {
      if (p + 2 > end) throw truncated(i, size); defSize = LE.u16(a, p); p += 2
    }
    val sizes = new Array[Int](numBuffers)
    var b = 0
    while (b < numBuffers) {
      if (large) {
        if (p + 4 > end) throw truncated(i, size)
        val s = LE.u32(a, p); if (s >= Int.MaxValue) throw ref.corrupt("huge chunk buffer");
        sizes(b) = s.toInt; p += 4
      } else { if (p + 2 > end) throw truncated(i, size); sizes(b) = LE.u16(a, p); p += 2 }
      b += 1
    }
    p = start + (((p - start) + 7) & ~7)
    var repSlice: Slice = null; var defSlice: Slice = null
    if (repSize >= 0) {
      if (p + repSize > end) throw truncated(i, size)
      repSlice = new Slice(a, p, repSize); p += repSize; p = start + (((p - start) + 7) & ~7)
    }
    if (defSize >= 0) {
      if (p + defSize > end) throw truncated(i, size)
      defSlice = new Slice(a, p, defSize); p += defSize; p = start + (((p - start) + 7) & ~7)
    }
    val bufs = new Array[Slice](numBuffers)
    b = 0
    while (b < numBuffers) {
      if (p + sizes(b) > end) throw truncated(i, size)
      bufs(b) = new Slice(a, p, sizes(b)); p += sizes(b); p = start + (((p - start) + 7) & ~7);
      b += 1
    }

    val numLevels = resolveLevels(declared, repSlice, defSlice)
    val rep = if (repSlice == null) null
    else Codecs.toLevels(repCodec.decode(repSlice, numLevels), numLevels, ref)
    val defs = if (defSlice == null) null
    else Codecs.toLevels(defCodec.decode(defSlice, numLevels), numLevels, ref)
    val values =
      if (dictionary == null) valueCodec.decode(bufs, items)
      else {
        val idx = valueCodec match {
          case ib: InlineBitpackMini => ib.decodeIndices(bufs, items)
          case c => Codecs.toIndices(c.decode(bufs, items), ref)
        }
        val nd = dictionary.count
        var k = 0
        while (k < items) {
          if (idx(k) < 0 || idx(k) >= nd) throw ref.corrupt(s"dictionary index ${idx(k)} of $nd")
          k += 1
        }
        new DictValues(items, idx, dictionary)
      }
    if (values.count != items)
      throw ref.corrupt(s"chunk $i decoded ${values.count} values, expected $items")
    val nLevels = if (rep == null && defs == null) items else numLevels
    new Chunk(rep, defs, nLevels, values)
  }

  /** The u16 level count wraps past 65535; RLE levels carry the true count in their runs. */
  private def resolveLevels(declared: Int, rep: Slice, defs: Slice): Int = {
    def inferred(codec: BlockCodec, s: Slice): Option[Long] = codec match {
      case r: RleBlock if s != null => r.countValues(s)
      case _ => None
    }
    inferred(repCodec, rep).orElse(inferred(defCodec, defs)) match {
      case Some(n) =>
        ref.check(
          n >= declared && n % 65536 == declared && n < Int.MaxValue,
          s"chunk declares $declared levels but its runs hold $n"
        )
        n.toInt
      case None => declared
    }
  }

  /** Makes chunk `c` (number `i`, the first one holding `row`) current, its cursor on `row`. */
  private def position(c: Chunk, i: Int, row: Long): Unit = {
    if (layers.maxRep == 0) {
      val skip = (row - itemStart(i)).toInt
      cur = c; skipLevelsNoRep(c, skip)
    } else if (rowStarts != null) {
      // Skip the preamble (the end of a row begun in an earlier chunk), then whole rows.
      val r = c.rep; var p = 0; var it = 0
      if (i > 0 && trailer(i - 1)) {
        while (p < c.nLevels && r(p) != layers.maxRep) {
          if (c.defs == null || c.defs(p) <= pageMaxVisibleDef) it += 1; p += 1
        }
      }
      c.pos = p; c.item = it
      cur = c
      val rows = row - rowStarts(i)
      if (rows > 0) walk(rows.toInt, null)
    } else {
      cur = c
      if (row > 0) walk(row.toInt, null)
    }
  }

  private def skipLevelsNoRep(c: Chunk, k: Int): Unit = {
    var vis = k
    if (c.defs != null) {
      vis = 0; var i = 0; while (i < k) { if (c.defs(i) <= pageMaxVisibleDef) vis += 1; i += 1 }
    }
    c.pos = k; c.item = vis
  }

  // Decode the first chunk eagerly so the cursor sits on the first requested row.
  if (firstChunk <= lastChunk && rowUntil > rowFrom) nextChunk()
}

private[structural] object MiniBlockPage {

  /**
   * Fills byte starts and item starts of `n` chunks from their metadata words (u32 when
   * `large`, else u16: low 4 bits log2(values), the rest bytes/8 - 1). Returns -1, or
   * 4 * chunk + (0: non-final chunk of 2^0 values, 1: more values than the page, 2: last
   * chunk's count wrong) for the first bad chunk.
   */
  def chunkTable(
      m: Slice,
      large: Boolean,
      n: Int,
      numItems: Long,
      chunkStart: Array[Long],
      itemStart: Array[Long]
  ): Int = {
    val a = m.a; val off = m.off
    var i = 0
    while (i < n) {
      val word = if (large) LE.u32(a, off + 4 * i) else LE.u16(a, off + 2 * i).toLong
      chunkStart(i + 1) = chunkStart(i) + ((word >>> 4) + 1) * 8
      val log = (word & 0xf).toInt
      if (i < n - 1) {
        if (log <= 0) return 4 * i
        itemStart(i + 1) = itemStart(i) + (1L << log)
      } else {
        if (numItems < itemStart(i)) return 4 * i + 1
        if (!(log == 0 || (1L << log) == numItems - itemStart(i))) return 4 * i + 2
        itemStart(i + 1) = numItems
      }
      i += 1
    }
    -1
  }
}
