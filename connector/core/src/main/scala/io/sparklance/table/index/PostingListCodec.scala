package io.sparklance.table.index

import java.io.ByteArrayOutputStream

import io.sparklance.LanceErrors

/**
 * One posting list of an INVERTED index as pylance 14 writes it (`part_N_invert.lance`, a row
 * per token; found against pylance 14.0.2, format version 2 with `posting_block_size` 128
 * and `posting_tail_codec` `varint_delta_v1`):
 *
 *  - `_posting`: blocks of 128 documents, each the block's BM25 bound (f32), the first doc id
 *    (u32), then doc ids as differences and frequencies, each bit-packed ([[BitPacker4x]])
 *    after a byte of its bit width; the last block, when the list's length is not a multiple
 *    of 128, is the bound then varints: the first doc id, the differences, the frequencies;
 *  - `_max_score`: the largest bound; `_length`: the number of documents;
 *  - `_impacts`: per block, then per run of 32 blocks, its last doc id and the frequencies
 *    with the (quantized) lengths of their shortest documents that no higher frequency is
 *    as short as (see `impact`).
 *
 * A block's bound is `idf * (k1 + 1)` times the largest `f / (f + k1 (1 - b + b dl / avgdl))`
 * of its documents (`k1` 1.2, `b` 0.75, `idf` ln(1 + (N - n + 0.5) / (n + 0.5))), all in f32
 * as Lance computes it, over the partition's documents.
 */
private[index] object PostingListCodec {
  private val K1 = 1.2f
  private val B = 0.75f
  private val Level1Blocks = 32

  final case class Encoded(
      blocks: Array[Array[Byte]],
      maxScore: Float,
      impacts: Array[Array[Byte]],
      positions: Array[Byte],
      positionOffsets: Array[Int]
  )

  /**
   * The positions of each document of a list of `freqs` held in `stream` (a list's
   * `_compressed_position`, layout `shared_stream_v2`, codec `packed_delta_v1`): per block of
   * 128 documents from `offsets(b)`, its documents' positions as differences (to the
   * position before in the document, the first as it is), 128 at a time bit-packed after a
   * byte of their bit width ([[BitPacker4x]], not as differences), the rest varints.
   */
  def decodePositions(
      stream: Array[Byte],
      offsets: Array[Int],
      freqs: Array[Int],
      file: String
  ): Array[Array[Int]] = {
    val n = freqs.length
    val numBlocks = (n + BitPacker4x.BlockLen - 1) / BitPacker4x.BlockLen
    if (offsets.length != numBlocks)
      throw LanceErrors.corruptFile(
        file,
        s"a list of $n documents has ${offsets.length} " +
          "position blocks"
      )
    val out = new Array[Array[Int]](n)
    try {
      var b = 0
      while (b < numBlocks) {
        val from = b * BitPacker4x.BlockLen
        val until = math.min(n, from + BitPacker4x.BlockLen)
        var total = 0
        var i = from
        while (i < until) { total += freqs(i); i += 1 }
        val deltas = new Array[Int](total)
        val pos = Array(offsets(b))
        var k = 0
        while (total - k >= BitPacker4x.BlockLen) {
          val nbits = stream(pos(0)) & 0xff
          System.arraycopy(
            BitPacker4x.unpack(stream, pos(0) + 1, nbits),
            0,
            deltas,
            k,
            BitPacker4x.BlockLen
          )
          pos(0) += 1 + 16 * nbits
          k += BitPacker4x.BlockLen
        }
        while (k < total) { deltas(k) = varint(stream, pos); k += 1 }
        k = 0
        i = from
        while (i < until) {
          val p = new Array[Int](freqs(i))
          var prev = 0
          var j = 0
          while (j < p.length) {
            prev = (if (j == 0) 0 else prev) + deltas(k)
            p(j) = prev
            j += 1
            k += 1
          }
          out(i) = p
          i += 1
        }
        b += 1
      }
    } catch {
      case e: IndexOutOfBoundsException =>
        throw LanceErrors.corruptFile(file, s"a position stream does not decode: $e", e)
    }
    out
  }

  /** The position stream and its blocks' offsets for documents' `positions` (as decoded). */
  private def encodePositions(positions: Array[Array[Int]]): (Array[Byte], Array[Int]) = {
    val out = new ByteArrayOutputStream()
    val n = positions.length
    val numBlocks = (n + BitPacker4x.BlockLen - 1) / BitPacker4x.BlockLen
    val offsets = new Array[Int](numBlocks)
    val chunk = new Array[Int](BitPacker4x.BlockLen)
    val packed = new Array[Byte](16 * 32)
    var b = 0
    while (b < numBlocks) {
      offsets(b) = out.size()
      var filled = 0
      var i = b * BitPacker4x.BlockLen
      val until = math.min(n, i + BitPacker4x.BlockLen)
      while (i < until) {
        val p = positions(i)
        var j = 0
        while (j < p.length) {
          chunk(filled) = if (j == 0) p(0) else p(j) - p(j - 1)
          filled += 1
          if (filled == BitPacker4x.BlockLen) {
            val nbits = BitPacker4x.numBits(chunk)
            out.write(nbits)
            BitPacker4x.pack(chunk, nbits, packed, 0)
            out.write(packed, 0, 16 * nbits)
            filled = 0
          }
          j += 1
        }
        i += 1
      }
      var k = 0
      while (k < filled) { putVarint(out, chunk(k)); k += 1 }
      b += 1
    }
    (out.toByteArray, offsets)
  }

  /** The doc ids and frequencies of a list of `length` documents held in `blocks`. */
  def decode(blocks: Seq[Array[Byte]], length: Int, file: String): (Array[Int], Array[Int]) = {
    val docs = new Array[Int](length)
    val freqs = new Array[Int](length)
    val full = length / BitPacker4x.BlockLen
    val tail = length % BitPacker4x.BlockLen
    if (blocks.length != full + (if (tail > 0) 1 else 0))
      throw LanceErrors.corruptFile(
        file,
        s"a posting list of $length documents has " +
          s"${blocks.length} blocks"
      )
    try {
      var b = 0
      while (b < full) {
        val block = blocks(b)
        val first = BitPacker4x.readInt(block, 4)
        val nbits = block(8) & 0xff
        val d = BitPacker4x.unpack(block, 9, nbits)
        val fbits = block(9 + nbits * 16) & 0xff
        val f = BitPacker4x.unpack(block, 10 + nbits * 16, fbits)
        var prev = first
        var i = 0
        while (i < BitPacker4x.BlockLen) {
          prev += d(i)
          docs(b * BitPacker4x.BlockLen + i) = prev
          freqs(b * BitPacker4x.BlockLen + i) = f(i)
          i += 1
        }
        b += 1
      }
      if (tail > 0) {
        val block = blocks(full)
        val pos = Array(4)
        val base = full * BitPacker4x.BlockLen
        var prev = 0
        var i = 0
        while (i < tail) {
          prev += varint(block, pos)
          docs(base + i) = prev
          i += 1
        }
        i = 0
        while (i < tail) { freqs(base + i) = varint(block, pos); i += 1 }
      }
    } catch {
      case e: IndexOutOfBoundsException =>
        throw LanceErrors.corruptFile(file, s"a posting list does not decode: $e", e)
    }
    (docs, freqs)
  }

  /**
   * Encodes the list of `docs` (increasing) with `freqs`, over a partition whose document `d`
   * has `numTokens(d)` tokens, `avgdl` tokens on average.
   */
  def encode(
      docs: Array[Int],
      freqs: Array[Int],
      numTokens: Array[Int],
      avgdl: Float,
      positions: Array[Array[Int]] = null
  ): Encoded = {
    val n = docs.length
    val idfScale = idf(n, numTokens.length) * (K1 + 1.0f)
    val numBlocks = (n + BitPacker4x.BlockLen - 1) / BitPacker4x.BlockLen
    val blocks = new Array[Array[Byte]](numBlocks)
    val level0 = new Array[Array[Byte]](numBlocks)
    val level1 = Array.newBuilder[Array[Byte]]
    var maxScore = -Float.MaxValue
    var groupStart = 0
    var b = 0
    while (b < numBlocks) {
      val from = b * BitPacker4x.BlockLen
      val until = math.min(n, from + BitPacker4x.BlockLen)
      var best = -Float.MaxValue
      var i = from
      while (i < until) {
        val f = freqs(i).toFloat
        val norm = K1 * (1.0f - B + B * numTokens(docs(i)).toFloat / avgdl)
        best = math.max(best, f / (f + norm))
        i += 1
      }
      val score = best * idfScale
      maxScore = math.max(maxScore, score)
      blocks(b) = if (until - from == BitPacker4x.BlockLen) fullBlock(score, docs, freqs, from)
      else tailBlock(score, docs, freqs, from, until)
      level0(b) = impact(docs, freqs, numTokens, from, until)
      if ((b + 1) % Level1Blocks == 0 || b == numBlocks - 1) {
        level1 += impact(docs, freqs, numTokens, groupStart, until)
        groupStart = until
      }
      b += 1
    }
    val (stream, offsets) = if (positions == null) (null, null) else encodePositions(positions)
    Encoded(blocks, maxScore, level0 ++ level1.result(), stream, offsets)
  }

  /** Lance's BM25 idf of a token in `tokenDocs` of `numDocs` documents, in f32. */
  def idf(tokenDocs: Int, numDocs: Int): Float = {
    val x = (numDocs.toFloat - tokenDocs.toFloat + 0.5f) / (tokenDocs.toFloat + 0.5f) + 1.0f
    math.log(x.toDouble).toFloat
  }

  private def fullBlock(
      score: Float,
      docs: Array[Int],
      freqs: Array[Int],
      from: Int
  ): Array[Byte] = {
    val d = java.util.Arrays.copyOfRange(docs, from, from + BitPacker4x.BlockLen)
    val f = java.util.Arrays.copyOfRange(freqs, from, from + BitPacker4x.BlockLen)
    val deltas = BitPacker4x.deltas(d(0), d)
    val dbits = BitPacker4x.numBits(deltas)
    val fbits = BitPacker4x.numBits(f)
    val out = new Array[Byte](10 + 16 * (dbits + fbits))
    putInt(out, 0, java.lang.Float.floatToRawIntBits(score))
    putInt(out, 4, d(0))
    out(8) = dbits.toByte
    BitPacker4x.pack(deltas, dbits, out, 9)
    out(9 + 16 * dbits) = fbits.toByte
    BitPacker4x.pack(f, fbits, out, 10 + 16 * dbits)
    out
  }

  private def tailBlock(
      score: Float,
      docs: Array[Int],
      freqs: Array[Int],
      from: Int,
      until: Int
  ): Array[Byte] = {
    val out = new ByteArrayOutputStream(4 + 2 * (until - from))
    val s = java.lang.Float.floatToRawIntBits(score)
    (0 until 4).foreach(i => out.write(s >>> (8 * i)))
    var prev = 0
    var i = from
    while (i < until) { putVarint(out, docs(i) - prev); prev = docs(i); i += 1 }
    i = from
    while (i < until) { putVarint(out, freqs(i)); i += 1 }
    out.toByteArray
  }

  /**
   * The impact entry of documents `[from, until)`: the varints of their last doc id and of
   * the number of pairs, then per pair (frequency, quantized length of its shortest
   * document, for the frequencies no higher one is as short as; of pairs of one quantized
   * length the higher frequency) the varint of `(frequency step - 1) << 1 | explicit`, and
   * when `explicit` the byte of the quantized length's step (a step of 1 is implied).
   */
  private def impact(
      docs: Array[Int],
      freqs: Array[Int],
      numTokens: Array[Int],
      from: Int,
      until: Int
  ): Array[Byte] = {
    val shortest = new java.util.TreeMap[Integer, Integer]()
    var i = from
    while (i < until) {
      val len = numTokens(docs(i))
      val had = shortest.get(freqs(i))
      if (had == null || Integer.compareUnsigned(len, had) < 0) shortest.put(freqs(i), len)
      i += 1
    }
    val raw = Array.newBuilder[(Int, Int)]
    var best = -1 // u32::MAX
    val it = shortest.descendingMap().entrySet().iterator()
    while (it.hasNext) {
      val e = it.next()
      if (Integer.compareUnsigned(e.getValue, best) < 0) {
        raw += ((e.getKey.intValue, e.getValue.intValue)); best = e.getValue
      }
    }
    val pairs = scala.collection.mutable.ArrayBuffer.empty[(Int, Int)]
    raw.result().reverse.foreach { case (f, len) =>
      val norm = quantizeLength(len)
      if (pairs.nonEmpty && pairs.last._2 == norm) pairs(pairs.length - 1) = (f, norm)
      else pairs += ((f, norm))
    }
    val out = new ByteArrayOutputStream()
    putVarint(out, if (until > from) docs(until - 1) else 0)
    putVarint(out, pairs.length)
    var prevFreq = 0
    var prevNorm = 0
    pairs.foreach { case (f, norm) =>
      val explicit = norm - prevNorm != 1
      putVarint(out, ((f - prevFreq - 1) << 1) | (if (explicit) 1 else 0))
      if (explicit) out.write(norm - prevNorm)
      prevFreq = f
      prevNorm = norm
    }
    out.toByteArray
  }

  /** Lance's byte code of a document length: exact below 8, else its top four bits. */
  private def quantizeLength(value: Int): Int = {
    val bits = 32 - Integer.numberOfLeadingZeros(value)
    if (bits < 4) value
    else {
      val shift = bits - 4
      ((value >>> shift) & 0x07) | ((shift + 1) << 3)
    }
  }

  private def putInt(b: Array[Byte], at: Int, v: Int): Unit = {
    b(at) = v.toByte; b(at + 1) = (v >>> 8).toByte
    b(at + 2) = (v >>> 16).toByte; b(at + 3) = (v >>> 24).toByte
  }

  private def putVarint(out: ByteArrayOutputStream, value: Int): Unit = {
    var v = value
    while ((v & ~0x7f) != 0) { out.write((v & 0x7f) | 0x80); v >>>= 7 }
    out.write(v)
  }

  private def varint(b: Array[Byte], pos: Array[Int]): Int = {
    var v = 0
    var shift = 0
    var more = true
    while (more) {
      val x = b(pos(0)) & 0xff
      pos(0) += 1
      v |= (x & 0x7f) << shift
      shift += 7
      more = (x & 0x80) != 0 && shift < 35
    }
    v
  }
}
