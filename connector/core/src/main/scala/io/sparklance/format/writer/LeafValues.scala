package io.sparklance.format.writer

import io.sparklance.format._

/**
 * The visible values of one leaf column buffered for the current page, in the leaf's
 * physical shape: fixed width (booleans one byte each until encoded), variable width, or
 * fixed-size lists of fixed-width items. A visible item without a value (a null) holds zero
 * bytes of the fixed width, or an empty string.
 */
private[writer] sealed abstract class LeafValues {
  def count: Int

  /** Bytes held, for the page budget. */
  def bytes: Long

  /**
   * Appends `n` items: item `k` is value `visibleIdx(k)` of `values` (-1: no value), or value
   * `k` when `visibleIdx` is null.
   */
  def append(values: ColumnArray, visibleIdx: Array[Int], n: Int): Unit
  def clear(): Unit

  /** Bytes the buffers hold room for (what keeping them costs). */
  def capacity: Long
}

private[writer] final class FixedValuesBuf(val width: Int, val bool: Boolean) extends LeafValues {
  val data = new ByteBuf(4096)
  var count = 0
  def bytes: Long = data.size.toLong
  def capacity: Long = data.capacity.toLong
  def clear(): Unit = { data.clear(); count = 0 }
  def append(values: ColumnArray, vis: Array[Int], n: Int): Unit = {
    data.ensure(n * width)
    values match {
      case f: FixedWidthArray =>
        require(f.byteWidth == width, s"expected $width-byte values, got ${f.byteWidth}")
        // Runs of consecutive values (or of nulls) are copied (or zeroed) at once: most
        // batches are one run.
        val at = data.extend(n * width)
        val dst = data.array
        var k = 0
        if (vis == null) { System.arraycopy(f.data, 0, dst, at, n * width); k = n }
        while (k < n) {
          val i = vis(k)
          var j = k + 1
          if (i >= 0) {
            while (j < n && vis(j) == i + (j - k)) j += 1
            System.arraycopy(f.data, i * width, dst, at + k * width, (j - k) * width)
          } else {
            while (j < n && vis(j) < 0) j += 1
            java.util.Arrays.fill(dst, at + k * width, at + j * width, 0.toByte)
          }
          k = j
        }
      case _: NullArray => data.zeros(n * width)
      case other => throw new IllegalArgumentException(
          s"expected fixed-width values, got ${other.getClass.getSimpleName}"
        )
    }
    count += n
  }

  /** Value `i`'s bytes start at `i * width`. */
  def allEqual: Boolean = {
    if (count == 0) return false
    val a = data.array
    var i = 1
    while (i < count) {
      if (!java.util.Arrays.equals(a, 0, width, a, i * width, i * width + width)) return false
      i += 1
    }
    true
  }
}

/** `large`: 64-bit offsets (large_string, large_binary, json), as Arrow's large types have. */
private[writer] final class VarValuesBuf(val large: Boolean = false) extends LeafValues {
  val data = new ByteBuf(4096)
  val offsets = new IntBuf(1024)
  offsets.add(0)
  var maxLen = 0
  def count: Int = offsets.size - 1
  def bytes: Long = data.size.toLong + 4L * offsets.size
  def capacity: Long = data.capacity.toLong + 4L * offsets.capacity
  def clear(): Unit = { data.clear(); offsets.clear(); offsets.add(0); maxLen = 0 }
  def append(values: ColumnArray, vis: Array[Int], n: Int): Unit = values match {
    case v: VarBinaryArray =>
      // A run of consecutive values is one copy of their bytes, then their offsets.
      var k = 0
      while (k < n) {
        val i = if (vis == null) k else vis(k)
        if (i < 0) { offsets.add(data.size); k += 1 }
        else {
          var j = if (vis == null) n else k + 1
          while (j < n && vis(j) == i + (j - k)) j += 1
          val last = i + (j - k)
          val from = v.offsets(i)
          val base = data.size - from
          data.bytes(v.data, from, v.offsets(last) - from)
          var x = i
          while (x < last) {
            val end = v.offsets(x + 1)
            val len = end - v.offsets(x)
            if (len > maxLen) maxLen = len
            offsets.add(base + end)
            x += 1
          }
          k = j
        }
      }
    case _: NullArray => var k = 0; while (k < n) { offsets.add(data.size); k += 1 }
    case other => throw new IllegalArgumentException(
        s"expected variable-width values, got ${other.getClass.getSimpleName}"
      )
  }
  def length(i: Int): Int = offsets(i + 1) - offsets(i)
}

/** Fixed-size lists of fixed-width items: `dim` items of `itemWidth` bytes per value, plus item validity. */
private[writer] final class FslValuesBuf(val dim: Int, val itemWidth: Int, val itemBool: Boolean)
    extends LeafValues {
  val data = new ByteBuf(4096)

  /** One byte per item, 1 = valid; kept only once a null item is seen. */
  val itemValid = new ByteBuf(256)
  var anyItemNull = false
  var count = 0
  def width: Int = dim * itemWidth
  def bytes: Long = data.size.toLong + itemValid.size
  def capacity: Long = data.capacity.toLong + itemValid.capacity
  def clear(): Unit = { data.clear(); itemValid.clear(); anyItemNull = false; count = 0 }
  def append(values: ColumnArray, vis: Array[Int], n: Int): Unit = {
    val w = width
    values match {
      case l: FixedSizeListArray =>
        require(l.dimension == dim, s"expected fixed-size lists of $dim items, got ${l.dimension}")
        val child = l.child match {
          case f: FixedWidthArray => f
          case other => throw new IllegalArgumentException(
              s"fixed-size list items must be fixed width, got ${other.getClass.getSimpleName}"
            )
        }
        var k = 0
        while (k < n) {
          val i = if (vis == null) k else vis(k)
          if (i >= 0) {
            data.bytes(child.data, i * w, w)
            if (child.nulls != null) {
              var t = 0
              while (t < dim) {
                if (child.nulls(i * dim + t)) {
                  if (!anyItemNull) { anyItemNull = true; backfillValid() }
                }
                t += 1
              }
              if (anyItemNull) {
                t = 0;
                while (t < dim) { itemValid.u8(if (child.nulls(i * dim + t)) 0 else 1); t += 1 }
              }
            } else if (anyItemNull) { var t = 0; while (t < dim) { itemValid.u8(1); t += 1 } }
          } else {
            data.zeros(w)
            if (anyItemNull) { var t = 0; while (t < dim) { itemValid.u8(1); t += 1 } }
          }
          count += 1
          k += 1
        }
      case _: NullArray =>
        data.zeros(n * w)
        if (anyItemNull) { var t = 0; while (t < n * dim) { itemValid.u8(1); t += 1 } }
        count += n
      case other => throw new IllegalArgumentException(
          s"expected fixed-size lists, got ${other.getClass.getSimpleName}"
        )
    }
  }

  /** The values before the first null item were all valid. */
  private def backfillValid(): Unit = {
    var t = 0; while (t < count * dim) { itemValid.u8(1); t += 1 }
  }
}

/** The items of a `null` column: only counted, every one null. */
private[writer] final class NullValuesBuf extends LeafValues {
  var count = 0
  def bytes: Long = 0L
  def capacity: Long = 0L
  def clear(): Unit = count = 0
  def append(values: ColumnArray, vis: Array[Int], n: Int): Unit = count += n
}

private[writer] object LeafValues {

  /** What a page encoder says of a `null` column, whose pages are all-null pages. */
  def noValues: Nothing =
    throw new IllegalStateException("a null column's pages hold no values to encode")

  def isLarge(t: LogicalType): Boolean = t match {
    case LogicalType.LargeUtf8 | LogicalType.LargeBinary | LogicalType.Json => true
    case d: LogicalType.Dictionary => isLarge(d.value)
    case _ => false
  }

  def forShape(shape: ValueShape, column: String, large: Boolean = false): LeafValues =
    shape match {
      case ValueShape.Fixed(w, bool) => new FixedValuesBuf(w, bool)
      case ValueShape.Var => new VarValuesBuf(large)
      case ValueShape.FixedList(dim, ValueShape.Fixed(w, bool)) => new FslValuesBuf(dim, w, bool)
      case ValueShape.Nulls => new NullValuesBuf
      case other => throw io.sparklance.LanceErrors.unsupported(
          s"Column '$column': cannot write values of shape $other"
        )
    }
}
