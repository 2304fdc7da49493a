package io.sparklance.format.v20

import io.sparklance.format._
import io.sparklance.proto.EncodingsV20Protos.Dictionary

/**
 * 2.0 `Dictionary{indices, items, num_dictionary_items}`, both page buffers. Decodes the items
 * once per page, then gathers them by index into plain values, or, for string pages of a
 * decoder that keeps dictionaries, hands out the ids with the entries. Indices are 1-based with 0 = null when the writer chose the encoding for a
 * plain field, and Arrow's own 0-based indices for a dictionary-typed field.
 */
object DictionaryDecoder {

  def decode(
      d: Dictionary,
      n: Int,
      shape: ValueShape,
      oneBased: Boolean,
      dec: ArrayDecoder,
      ctx: PageContext
  ): ColumnArray = {
    val numItems = d.getNumDictionaryItems
    ctx.check(numItems >= 0, s"negative dictionary size $numItems")
    val items = dec.decode(d.getItems, numItems, shape)
    val (raw, indexNulls) = dec.unsignedLongs(d.getIndices, n, "dictionary indices")
    gather(raw, indexNulls, n, numItems, items, oneBased, dec.keepStringDictionary, ctx)
  }

  /** Rows `[from, until)` of a page of `n` rows, reading only their indices; null when their encoding does not allow it. */
  def decodeWindow(
      d: Dictionary,
      n: Int,
      from: Int,
      until: Int,
      shape: ValueShape,
      oneBased: Boolean,
      dec: ArrayDecoder,
      ctx: PageContext
  ): ColumnArray = {
    val numItems = d.getNumDictionaryItems
    ctx.check(numItems >= 0, s"negative dictionary size $numItems")
    dec.unsignedLongsWindow(d.getIndices, n, from, until, "dictionary indices") match {
      case null => null
      case (raw, indexNulls) =>
        gather(
          raw,
          indexNulls,
          until - from,
          numItems,
          dec.decode(d.getItems, numItems, shape),
          oneBased,
          dec.keepStringDictionary,
          ctx
        )
    }
  }

  private def gather(
      raw: Array[Long],
      indexNulls: Array[Boolean],
      n: Int,
      numItems: Int,
      items: ColumnArray,
      oneBased: Boolean,
      keep: Boolean,
      ctx: PageContext
  ): ColumnArray = {
    // Resolve to 0-based item positions, -1 for null, checking the range once here.
    val idx = new Array[Int](n)
    var anyNull = false
    var i = 0
    while (i < n) {
      val v = raw(i)
      val k =
        if (indexNulls != null && indexNulls(i)) -1L
        else if (oneBased) v - 1
        else v
      if (k >= numItems || k < -1 || (!oneBased && k < 0 && !(indexNulls != null && indexNulls(i))))
        throw ctx.corrupt(s"dictionary index $v of row $i is outside the $numItems-item dictionary")
      val kk = if (k >= 0 && items.nulls != null && items.nulls(k.toInt)) -1 else k.toInt
      idx(i) = kk
      anyNull |= kk < 0
      i += 1
    }
    val nulls = if (anyNull) {
      val a = new Array[Boolean](n); i = 0; while (i < n) { a(i) = idx(i) < 0; i += 1 }; a
    } else null
    items match {
      case v: VarBinaryArray if keep && numItems > 0 =>
        // Null rows (-1) point at entry 0; their nulls flag says they are null. Null entries
        // are only ever reached by null rows, so the dictionary itself has no nulls.
        i = 0
        while (i < n) { if (idx(i) < 0) idx(i) = 0; i += 1 }
        new DictionaryArray(
          n,
          nulls,
          idx,
          new StringDictionary(new VarBinaryArray(v.length, null, v.offsets, v.data))
        )
      case v: VarBinaryArray => gatherVar(v, idx, nulls)
      case f: FixedWidthArray => gatherFixed(f, idx, nulls)
      case other =>
        throw ctx.corrupt(s"dictionary items decoded as ${other.getClass.getSimpleName}")
    }
  }

  private def gatherVar(
      items: VarBinaryArray,
      idx: Array[Int],
      nulls: Array[Boolean]
  ): VarBinaryArray = {
    val n = idx.length
    val io = items.offsets
    var total = 0L
    var i = 0
    while (i < n) { val k = idx(i); if (k >= 0) total += io(k + 1) - io(k); i += 1 }
    if (total > Int.MaxValue - 16)
      throw new IllegalArgumentException(s"dictionary page expands to $total bytes")
    val data = new Array[Byte](total.toInt)
    val offsets = new Array[Int](n + 1)
    var pos = 0
    i = 0
    while (i < n) {
      val k = idx(i)
      if (k >= 0) {
        val s = io(k); val len = io(k + 1) - s
        System.arraycopy(items.data, s, data, pos, len)
        pos += len
      }
      offsets(i + 1) = pos
      i += 1
    }
    new VarBinaryArray(n, nulls, offsets, data)
  }

  private def gatherFixed(
      items: FixedWidthArray,
      idx: Array[Int],
      nulls: Array[Boolean]
  ): FixedWidthArray = {
    val n = idx.length
    val w = items.byteWidth
    val out = new Array[Byte](Math.multiplyExact(n, w))
    var i = 0
    while (i < n) {
      val k = idx(i)
      if (k >= 0) System.arraycopy(items.data, k * w, out, i * w, w)
      i += 1
    }
    new FixedWidthArray(n, nulls, w, out)
  }
}
