package io.sparklance.format.structural

import io.sparklance.format._

/**
 * The dictionary side of a top-level string column's [[VarBuilder]]. While every value of the
 * batch comes from dictionary chunks it keeps their ids, never copying an entry's bytes: ids
 * point into the concatenation of the page dictionaries the batch has met (one, unless the
 * batch crosses a page boundary), each page's ids shifted by the entries of the pages before.
 * Slots of all-null pages get id 0, which their nulls flags cover.
 *
 * The builder gives up on it (see [[VarBuilder]]) when a chunk is not dictionary-encoded; a
 * batch whose dictionaries hold more entries than it has rows comes out as plain bytes too.
 */
private[structural] final class DictionaryCollector {
  private var ids = new Array[Int](1024)
  private var n = 0

  /** The dictionaries of this batch in order of first use, as decoded values and as entries. */
  private val sources = scala.collection.mutable.ArrayBuffer[VarValues]()
  private val dicts = scala.collection.mutable.ArrayBuffer[StringDictionary]()
  private val bases = scala.collection.mutable.ArrayBuffer[Int]()
  private var entries = 0L
  // The last page's dictionary outlives the batch: the next batch of that page reuses the same
  // StringDictionary, so per-entry work downstream (Spark's byte[] per entry) is done once a page.
  private var lastSource: VarValues = null
  private var lastDict: StringDictionary = null

  def size: Int = n

  private def ensure(more: Int): Unit =
    if (n + more > ids.length)
      ids = java.util.Arrays.copyOf(ids, math.max(n + more, ids.length * 2))

  /** Appends the ids of values [from, until) of `d`, whose dictionary is `dict`. */
  def append(d: DictValues, dict: VarValues, from: Int, until: Int): Unit = {
    var j = sources.indexWhere(_ eq dict)
    if (j < 0) {
      val sd = if (dict eq lastSource) lastDict
      else { lastSource = dict; lastDict = toDictionary(dict); lastDict }
      sources += dict; dicts += sd; bases += entries.toInt
      entries += sd.size
      if (entries > Int.MaxValue - 16)
        throw new IllegalStateException(s"$entries dictionary entries in one batch")
      j = sources.length - 1
    }
    val base = bases(j)
    val k = until - from
    ensure(k)
    val src = d.indices
    if (base == 0) System.arraycopy(src, from, ids, n, k)
    else { var i = 0; while (i < k) { ids(n + i) = src(from + i) + base; i += 1 } }
    n += k
  }

  /** `k` slots whose rows are null (id 0). */
  def appendPlaceholders(k: Int): Unit = {
    ensure(k); java.util.Arrays.fill(ids, n, n + k, 0); n += k
  }

  /**
   * The batch as a [[DictionaryArray]], or null when it should be plain bytes: no dictionary
   * (only null slots, or nothing) or more dictionary entries than rows across several pages.
   */
  def result(nulls: Array[Boolean]): DictionaryArray = {
    if (dicts.isEmpty || entries == 0 || (dicts.size > 1 && entries > n)) return null
    new DictionaryArray(n, nulls, java.util.Arrays.copyOf(ids, n), merged)
  }

  /** What was collected, as values a plain builder can append: dictionary lookups, or null slots. */
  def asValues: Values =
    if (dicts.isEmpty || entries == 0) new ConstantValues(n, null)
    else {
      val v = merged.values
      new DictValues(
        n,
        java.util.Arrays.copyOf(ids, n),
        new VarValues(v.length, v.offsets, 0, v.data)
      )
    }

  /** The batch's dictionaries as one, in the order `bases` numbers them (concat keeps that order). */
  private def merged: StringDictionary = StringDictionary.concat(dicts.toSeq)._1

  def reset(): Unit = { n = 0; sources.clear(); dicts.clear(); bases.clear(); entries = 0 }

  /**
   * The entries of a page dictionary, copied out of the page's buffer (a batch's arrays may
   * outlive the page) with offsets from 0.
   */
  private def toDictionary(v: VarValues): StringDictionary = {
    val count = v.count
    val start = v.offsets(v.offOff)
    val end = v.offsets(v.offOff + count)
    val offsets = new Array[Int](count + 1)
    var i = 0
    while (i <= count) { offsets(i) = v.offsets(v.offOff + i) - start; i += 1 }
    new StringDictionary(new VarBinaryArray(
      count,
      null,
      offsets,
      java.util.Arrays.copyOfRange(v.data, start, end)
    ))
  }
}
