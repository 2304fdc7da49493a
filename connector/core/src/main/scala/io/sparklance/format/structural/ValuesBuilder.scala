package io.sparklance.format.structural

import io.sparklance.format._

/**
 * Accumulates the visible values of one leaf column over a batch, whatever pages and chunks
 * they come from, then hands out a [[ColumnArray]]. One builder kind per physical shape,
 * chosen once per column from the field's type; appends are bulk array copies.
 */
private[structural] abstract class ValuesBuilder {
  def size: Int

  /** Appends values [from, until) of `v`. */
  def append(v: Values, from: Int, until: Int): Unit

  /** Appends `n` placeholder values (the slots of null items of all-null pages). */
  def appendNulls(n: Int): Unit

  /**
   * The batch's values. With `shared` the array may share this builder's buffers (longer
   * than the values they hold), which the next batch overwrites: for a caller done with it
   * before then; otherwise it is a copy of its own.
   */
  def result(nulls: Array[Boolean], shared: Boolean = false): ColumnArray
  def reset(): Unit

  protected def mismatch(v: Values): Nothing =
    throw new IllegalStateException(
      s"decoded ${v.getClass.getSimpleName} does not fit ${getClass.getSimpleName}"
    )

  /** Resolves constants and dictionaries, which any builder accepts, then calls `direct`. */
  protected final def generic(
      v: Values,
      from: Int,
      until: Int
  )(direct: ValuesBuilder.RangeAppend): Unit = v match {
    case c: ConstantValues =>
      if (c.scalar == null) appendNulls(until - from)
      else { var i = from; while (i < until) { direct(c.scalar, 0, 1); i += 1 } }
    case d: DictValues =>
      var i = from
      while (i < until) { val k = d.indices(i); direct(d.dictionary, k, k + 1); i += 1 }
    case _ => direct(v, from, until)
  }
}

private[structural] object ValuesBuilder {

  /**
   * Appends values `[from, until)` of a decoded run: a trait of primitive parameters, so the
   * per-value calls for constants and dictionaries box nothing (a Function3 boxes its Ints).
   */
  private[structural] trait RangeAppend { def apply(v: Values, from: Int, until: Int): Unit }

  /** The builder for the values a leaf field of this type decodes to. */
  def forField(f: LanceField): ValuesBuilder = {
    if (
      f.logicalType == LogicalType.Struct || f.children.nonEmpty && f.logicalType == LogicalType.Struct
    )
      new StructBuilder(f.children.map(forField).toArray)
    else forType(f.logicalType, f.name)
  }

  /**
   * `keepDictionary`: strings and binary from dictionary pages come out as [[DictionaryArray]]s
   * (for top-level columns, which the Spark layer can hand over as dictionary vectors).
   */
  def forType(t: LogicalType, name: String, keepDictionary: Boolean = false): ValuesBuilder =
    t match {
      case LogicalType.FixedSizeList(item, dim) => new FslBuilder(dim, forType(item, name))
      case LogicalType.Dictionary(value, _, _) => forType(value, name, keepDictionary)
      case _ =>
        val w = byteWidth(t)
        if (w > 0) new FixedBuilder(w)
        else new VarBuilder(keepDictionary, t == LogicalType.Utf8 || t == LogicalType.LargeUtf8)
    }

  /** Bytes per value of fixed-width types; 0 for variable-width ones. */
  def byteWidth(t: LogicalType): Int = t match {
    case LogicalType.Bool | LogicalType.Int8 | LogicalType.UInt8 => 1
    case LogicalType.Int16 | LogicalType.UInt16 | LogicalType.Float16 | LogicalType.BFloat16 => 2
    case LogicalType.Int32 | LogicalType.UInt32 | LogicalType.Float32 | LogicalType.Date32 => 4
    case LogicalType.Int64 | LogicalType.UInt64 | LogicalType.Float64 | LogicalType.Date64 => 8
    case t: LogicalType.Time => t.bitWidth / 8
    case _: LogicalType.Duration | _: LogicalType.Timestamp => 8
    case LogicalType.Decimal(bits, _, _) => bits / 8
    case LogicalType.FixedSizeBinary(n) => n
    case LogicalType.Null => 1
    case _ => 0
  }
}

private[structural] final class FixedBuilder(val width: Int) extends ValuesBuilder {
  private var data = new Array[Byte](width * 1024)
  private var n = 0
  def size: Int = n
  private def ensure(more: Int): Unit = {
    val need = (n.toLong + more) * width
    if (need > data.length) {
      if (need > Int.MaxValue - 16) throw new IllegalStateException("batch too large")
      data = java.util.Arrays.copyOf(
        data,
        math.max(need, math.min(Int.MaxValue - 16L, data.length * 2L)).toInt
      )
    }
  }
  def append(v: Values, from: Int, until: Int): Unit = v match {
    case d: DictValues
        if d.dictionary.isInstanceOf[FixedValues] && d.dictionary.asInstanceOf[
          FixedValues
        ].width == width =>
      // Dictionary gather: one tight loop, specialised for the common widths.
      val dict = d.dictionary.asInstanceOf[FixedValues]
      val k = until - from; ensure(k)
      val src = dict.data; val so = dict.off; val idx = d.indices
      var i = 0; var o = n * width
      width match {
        case 8 => while (i < k) {
            io.sparklance.format.codec.LittleEndian.putI64(
              data,
              o,
              io.sparklance.format.codec.LittleEndian.i64(src, so + idx(from + i) * 8)
            ); o += 8; i += 1
          }
        case 4 => while (i < k) {
            io.sparklance.format.codec.LittleEndian.putI32(
              data,
              o,
              io.sparklance.format.codec.LittleEndian.i32(src, so + idx(from + i) * 4)
            ); o += 4; i += 1
          }
        case 16 => // decimal128: two words, not a call per value
          while (i < k) {
            val s = so + idx(from + i) * 16
            io.sparklance.format.codec.LittleEndian.putI64(
              data,
              o,
              io.sparklance.format.codec.LittleEndian.i64(src, s)
            )
            io.sparklance.format.codec.LittleEndian.putI64(
              data,
              o + 8,
              io.sparklance.format.codec.LittleEndian.i64(src, s + 8)
            )
            o += 16; i += 1
          }
        case _ => while (i < k) {
            System.arraycopy(src, so + idx(from + i) * width, data, o, width); o += width; i += 1
          }
      }
      n += k
    case c: ConstantValues if c.scalar.isInstanceOf[FixedValues] =>
      val f = c.scalar.asInstanceOf[FixedValues]
      val k = until - from; ensure(k)
      if (k > 0) {
        System.arraycopy(f.data, f.off, data, n * width, width)
        var filled = 1
        while (filled < k) {
          val m = math.min(filled, k - filled);
          System.arraycopy(data, n * width, data, (n + filled) * width, m * width); filled += m
        }
      }
      n += k
    case _ => generic(v, from, until)(direct)
  }
  private val direct: ValuesBuilder.RangeAppend = (v, from, until) =>
    v match {
      case f: FixedValues if f.width == width =>
        val k = until - from; ensure(k)
        System.arraycopy(f.data, f.off + from * width, data, n * width, k * width); n += k
      case f: FixedValues if width == 1 && f.width != 1 => mismatch(v)
      case _ => mismatch(v)
    }
  def appendNulls(k: Int): Unit = {
    ensure(k); java.util.Arrays.fill(data, n * width, (n + k) * width, 0.toByte); n += k
  }
  def result(nulls: Array[Boolean], shared: Boolean): ColumnArray =
    new FixedWidthArray(
      n,
      nulls,
      width,
      if (shared) data else java.util.Arrays.copyOf(data, n * width)
    )
  def reset(): Unit = n = 0
}

/**
 * Strings and binary. With `keepDictionary` a batch starts out collecting dictionary ids
 * ([[DictionaryCollector]]); the first chunk that is not dictionary-encoded turns the ids
 * collected so far into bytes and the rest of the batch is copied as bytes.
 */
private[structural] final class VarBuilder(
    keepDictionary: Boolean = false,
    val utf8: Boolean = false
) extends ValuesBuilder {
  private var offsets = new Array[Int](1025)
  private var data = new Array[Byte](8192)
  private var n = 0
  // UTF-8 checks (string columns): values [0, checked) were checked; dictionaries once each.
  private var checked = 0
  private var lastCheckedDict: VarValues = null
  private var dictError: String = null

  /**
   * Why a value appended since the last call is not a valid string, or null: for string
   * columns, asked after each page read so that the error names the page.
   */
  def invalidUtf8(): String = {
    if (dictError != null) { val e = dictError; dictError = null; return e }
    if (!utf8 || collecting || n <= checked) return null
    val i = Utf8Validator.firstInvalid(offsets, 0, data, checked, n)
    checked = n
    if (i >= 0) Utf8Validator.describe(offsets, 0, data, i) else null
  }

  private def checkDictionary(dict: VarValues): Unit =
    if (utf8 && (dict ne lastCheckedDict)) {
      lastCheckedDict = dict
      val i = Utf8Validator.firstInvalid(dict.offsets, dict.offOff, dict.data, 0, dict.count)
      if (i >= 0) dictError = "dictionary entry " + i + ": " +
        Utf8Validator.describe(dict.offsets, dict.offOff, dict.data, i)
    }
  private val collector = if (keepDictionary) new DictionaryCollector else null
  private var collecting = keepDictionary
  def size: Int = if (collecting) collector.size else n

  /** Leaves dictionary mode for this batch: what was collected becomes bytes. */
  private def spill(): Unit = {
    collecting = false
    val k = collector.size
    if (k > 0) append(collector.asValues, 0, k)
    collector.reset()
  }
  private def ensureValues(more: Int): Unit =
    if (n + more + 1 > offsets.length)
      offsets = java.util.Arrays.copyOf(offsets, math.max(n + more + 1, offsets.length * 2))
  private def ensureBytes(more: Long): Unit = {
    val need = offsets(n).toLong + more
    if (need > Int.MaxValue - 16)
      throw new IllegalStateException("more than 2 GiB of strings in one batch")
    if (need > data.length) data = java.util.Arrays.copyOf(
      data,
      math.max(need, math.min(Int.MaxValue - 16L, data.length * 2L)).toInt
    )
  }
  def append(v: Values, from: Int, until: Int): Unit = {
    if (collecting) v match {
      case d: DictValues if d.dictionary.isInstanceOf[VarValues] =>
        checkDictionary(d.dictionary.asInstanceOf[VarValues])
        collector.append(d, d.dictionary.asInstanceOf[VarValues], from, until); return
      case c: ConstantValues if c.scalar == null =>
        collector.appendPlaceholders(until - from); return
      case _ => spill()
    }
    appendPlain(v, from, until)
  }

  private def appendPlain(v: Values, from: Int, until: Int): Unit = v match {
    case d: DictValues if d.dictionary.isInstanceOf[VarValues] =>
      val dict = d.dictionary.asInstanceOf[VarValues]
      val k = until - from; ensureValues(k)
      var total = 0L; var i = from
      while (i < until) {
        val j = dict.offOff + d.indices(i); total += dict.offsets(j + 1) - dict.offsets(j); i += 1
      }
      ensureBytes(total)
      var o = offsets(n); i = 0
      while (i < k) {
        val j = dict.offOff + d.indices(from + i); val s = dict.offsets(j);
        val len = dict.offsets(j + 1) - s
        System.arraycopy(dict.data, s, data, o, len); o += len; offsets(n + i + 1) = o; i += 1
      }
      n += k
    case _ => generic(v, from, until)(direct)
  }
  private val direct: ValuesBuilder.RangeAppend = (v, from, until) =>
    v match {
      case x: VarValues =>
        val k = until - from; ensureValues(k)
        val s = x.offsets(x.offOff + from); val e = x.offsets(x.offOff + until)
        ensureBytes(e - s)
        val base = offsets(n)
        System.arraycopy(x.data, s, data, base, e - s)
        var i = 1
        val shift = base - s
        while (i <= k) { offsets(n + i) = x.offsets(x.offOff + from + i) + shift; i += 1 }
        n += k
      case f: FixedValues =>
        // Fixed-size binary stored as fixed width but read as binary.
        val k = until - from; ensureValues(k); ensureBytes(k.toLong * f.width)
        val base = offsets(n)
        System.arraycopy(f.data, f.off + from * f.width, data, base, k * f.width)
        var i = 1
        while (i <= k) { offsets(n + i) = base + i * f.width; i += 1 }
        n += k
      case _ => mismatch(v)
    }
  def appendNulls(k: Int): Unit = {
    if (collecting) { collector.appendPlaceholders(k); return }
    ensureValues(k); val o = offsets(n); var i = 1
    while (i <= k) { offsets(n + i) = o; i += 1 }
    n += k
  }
  def result(nulls: Array[Boolean], shared: Boolean): ColumnArray = {
    if (collecting) {
      val d = collector.result(nulls)
      if (d != null) return d
      spill()
    }
    if (shared) new VarBinaryArray(n, nulls, offsets, data)
    else new VarBinaryArray(
      n,
      nulls,
      java.util.Arrays.copyOf(offsets, n + 1),
      java.util.Arrays.copyOf(data, offsets(n))
    )
  }
  def reset(): Unit = {
    n = 0; checked = 0; collecting = keepDictionary
    if (collector != null) collector.reset()
  }
}

private[structural] final class FslBuilder(val dim: Int, val child: ValuesBuilder)
    extends ValuesBuilder {
  private var itemNulls: Array[Boolean] = null
  private var n = 0
  def size: Int = n
  private def ensureNulls(items: Int): Unit = {
    if (itemNulls == null) itemNulls = new Array[Boolean](math.max(items, 1024))
    else if (items > itemNulls.length)
      itemNulls = java.util.Arrays.copyOf(itemNulls, math.max(items, itemNulls.length * 2))
  }
  def append(v: Values, from: Int, until: Int): Unit = generic(v, from, until)(direct)
  private val direct: ValuesBuilder.RangeAppend = (v, from, until) =>
    v match {
      case f: FslValues if f.dim == dim =>
        val k = until - from
        if (f.itemNulls != null) {
          ensureNulls((n + k) * dim)
          System.arraycopy(f.itemNulls, from * dim, itemNulls, n * dim, k * dim)
        } else if (itemNulls != null) {
          ensureNulls((n + k) * dim)
          java.util.Arrays.fill(itemNulls, n * dim, (n + k) * dim, false)
        }
        child.append(f.child, from * dim, until * dim)
        n += k
      case _ => mismatch(v)
    }
  def appendNulls(k: Int): Unit = {
    if (itemNulls != null) {
      ensureNulls((n + k) * dim); java.util.Arrays.fill(itemNulls, n * dim, (n + k) * dim, false)
    }
    child.appendNulls(k * dim); n += k
  }
  def result(nulls: Array[Boolean], shared: Boolean): ColumnArray = {
    val items = n * dim
    val inulls = if (itemNulls == null) null
    else {
      val a = java.util.Arrays.copyOf(itemNulls, items); if (a.contains(true)) a else null
    }
    new FixedSizeListArray(n, nulls, dim, child.result(inulls, shared))
  }
  def reset(): Unit = { n = 0; itemNulls = null; child.reset() }
}

/** Packed structs: the struct is the leaf; nulls live at the struct level only. */
private[structural] final class StructBuilder(val children: Array[ValuesBuilder])
    extends ValuesBuilder {
  private var n = 0
  def size: Int = n
  def append(v: Values, from: Int, until: Int): Unit = generic(v, from, until)(direct)
  private val direct: ValuesBuilder.RangeAppend = (v, from, until) =>
    v match {
      case s: StructValues if s.children.length == children.length =>
        var i = 0
        while (i < children.length) { children(i).append(s.children(i), from, until); i += 1 }
        n += until - from
      case _ => mismatch(v)
    }
  def appendNulls(k: Int): Unit = { children.foreach(_.appendNulls(k)); n += k }
  def result(nulls: Array[Boolean], shared: Boolean): ColumnArray =
    new StructArray(n, nulls, children.map(_.result(null, shared)))
  def reset(): Unit = { n = 0; children.foreach(_.reset()) }
}
