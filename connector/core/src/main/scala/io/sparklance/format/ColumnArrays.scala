package io.sparklance.format

/**
 * Row-level operations on decoded [[ColumnArray]]s: selecting rows (to drop deleted ones),
 * slicing and concatenating (to serve a batch that crosses page boundaries), and typed
 * all-null arrays. Every loop here is a bulk copy or a tight primitive loop; nothing boxes.
 */
object ColumnArrays {

  /** Rows `rowIndices` (ascending or not, each < array.length) of `array`, in that order. */
  def take(array: ColumnArray, rowIndices: Array[Int]): ColumnArray = {
    val n = rowIndices.length
    val nulls = takeNulls(array.nulls, rowIndices)
    array match {
      case a: FixedWidthArray =>
        val w = a.byteWidth
        val out = new Array[Byte](n * w)
        var i = 0
        // Runs of consecutive rows (all but deleted ones, typically) are copied at once.
        while (i < n) {
          val j = runEnd(rowIndices, i)
          System.arraycopy(a.data, rowIndices(i) * w, out, i * w, (j - i) * w)
          i = j
        }
        new FixedWidthArray(n, nulls, w, out)
      case a: VarBinaryArray =>
        val offsets = new Array[Int](n + 1)
        var i = 0
        var total = 0L
        while (i < n) { val r = rowIndices(i); total += a.offsets(r + 1) - a.offsets(r); i += 1 }
        val data = new Array[Byte](checkedSize(total))
        i = 0
        var pos = 0
        while (i < n) {
          val j = runEnd(rowIndices, i)
          val r = rowIndices(i)
          val s = a.offsets(r)
          val e = a.offsets(r + (j - i))
          System.arraycopy(a.data, s, data, pos, e - s)
          var k = i
          while (k < j) { offsets(k + 1) = pos + (a.offsets(r + (k - i) + 1) - s); k += 1 }
          pos += e - s
          i = j
        }
        new VarBinaryArray(n, nulls, offsets, data)
      case a: DictionaryArray =>
        val ids = new Array[Int](n)
        var i = 0
        while (i < n) { ids(i) = a.indices(rowIndices(i)); i += 1 }
        new DictionaryArray(n, nulls, ids, a.dictionary)
      case a: FixedSizeListArray =>
        val d = a.dimension
        val childIdx = new Array[Int](n * d)
        var i = 0
        while (i < n) {
          val base = rowIndices(i) * d
          var j = 0
          while (j < d) { childIdx(i * d + j) = base + j; j += 1 }
          i += 1
        }
        new FixedSizeListArray(n, nulls, d, take(a.child, childIdx))
      case a: ListArray =>
        val offsets = new Array[Int](n + 1)
        var i = 0
        var total = 0L
        while (i < n) {
          val r = rowIndices(i); total += a.offsets(r + 1) - a.offsets(r);
          offsets(i + 1) = checkedSize(total); i += 1
        }
        val childIdx = new Array[Int](offsets(n))
        i = 0
        var pos = 0
        while (i < n) {
          val r = rowIndices(i)
          var k = a.offsets(r)
          val e = a.offsets(r + 1)
          while (k < e) { childIdx(pos) = k; pos += 1; k += 1 }
          i += 1
        }
        new ListArray(n, nulls, offsets, take(a.child, childIdx))
      case a: StructArray =>
        new StructArray(n, nulls, a.children.map(take(_, rowIndices)))
      case _: NullArray => new NullArray(n)
    }
  }

  /** Rows `[from, from + len)` of `array`, copied. */
  def slice(array: ColumnArray, from: Int, len: Int): ColumnArray = {
    if (from == 0 && len == array.length) return array
    val nulls =
      if (array.nulls == null) null else java.util.Arrays.copyOfRange(array.nulls, from, from + len)
    array match {
      case a: FixedWidthArray =>
        val w = a.byteWidth
        new FixedWidthArray(
          len,
          nulls,
          w,
          java.util.Arrays.copyOfRange(a.data, from * w, (from + len) * w)
        )
      case a: VarBinaryArray =>
        val base = a.offsets(from)
        val offsets = new Array[Int](len + 1)
        var i = 0
        while (i <= len) { offsets(i) = a.offsets(from + i) - base; i += 1 }
        new VarBinaryArray(
          len,
          nulls,
          offsets,
          java.util.Arrays.copyOfRange(a.data, base, a.offsets(from + len))
        )
      case a: DictionaryArray =>
        new DictionaryArray(
          len,
          nulls,
          java.util.Arrays.copyOfRange(a.indices, from, from + len),
          a.dictionary
        )
      case a: FixedSizeListArray =>
        new FixedSizeListArray(
          len,
          nulls,
          a.dimension,
          slice(a.child, from * a.dimension, len * a.dimension)
        )
      case a: ListArray =>
        val base = a.offsets(from)
        val offsets = new Array[Int](len + 1)
        var i = 0
        while (i <= len) { offsets(i) = a.offsets(from + i) - base; i += 1 }
        new ListArray(len, nulls, offsets, slice(a.child, base, a.offsets(from + len) - base))
      case a: StructArray => new StructArray(len, nulls, a.children.map(slice(_, from, len)))
      case _: NullArray => new NullArray(len)
    }
  }

  /**
   * Concatenation of arrays of the same kind (as produced for one field by consecutive pages).
   * NullArray parts are allowed only when every part is a NullArray.
   */
  def concat(parts: Seq[ColumnArray]): ColumnArray = {
    if (parts.size == 1) return parts.head
    if (parts.exists(_.isInstanceOf[DictionaryArray])) {
      if (parts.forall(_.isInstanceOf[DictionaryArray])) {
        val merged = concatDictionaries(parts.map(_.asInstanceOf[DictionaryArray]))
        if (merged != null) return merged
      }
      return concat(parts.map(materialize))
    }
    val n = checkedSize(parts.iterator.map(_.length.toLong).sum)
    val nulls: Array[Boolean] =
      if (parts.forall(_.nulls == null)) null
      else {
        val out = new Array[Boolean](n)
        var pos = 0
        parts.foreach { p =>
          if (p.nulls != null) System.arraycopy(p.nulls, 0, out, pos, p.length); pos += p.length
        }
        out
      }
    parts.head match {
      case _: NullArray =>
        require(parts.forall(_.isInstanceOf[NullArray]), "cannot concatenate null and typed arrays")
        new NullArray(n)
      case f: FixedWidthArray =>
        val w = f.byteWidth
        val data = new Array[Byte](checkedSize(n.toLong * w))
        var pos = 0
        parts.foreach { p =>
          val a = p.asInstanceOf[FixedWidthArray]
          System.arraycopy(a.data, 0, data, pos, a.length * w); pos += a.length * w
        }
        new FixedWidthArray(n, nulls, w, data)
      case _: VarBinaryArray =>
        val total = checkedSize(parts.iterator.map { p =>
          val a = p.asInstanceOf[VarBinaryArray]; (a.offsets(a.length) - a.offsets(0)).toLong
        }.sum)
        val data = new Array[Byte](total)
        val offsets = new Array[Int](n + 1)
        var row = 0
        var pos = 0
        parts.foreach { p =>
          val a = p.asInstanceOf[VarBinaryArray]
          val base = a.offsets(0)
          val len = a.offsets(a.length) - base
          System.arraycopy(a.data, base, data, pos, len)
          var i = 1
          while (i <= a.length) { offsets(row + i) = a.offsets(i) - base + pos; i += 1 }
          row += a.length; pos += len
        }
        new VarBinaryArray(n, nulls, offsets, data)
      case f: FixedSizeListArray =>
        new FixedSizeListArray(
          n,
          nulls,
          f.dimension,
          concat(parts.map(_.asInstanceOf[FixedSizeListArray].child))
        )
      case _: ListArray =>
        val offsets = new Array[Int](n + 1)
        var row = 0
        var pos = 0
        val children = parts.map { p =>
          val a = p.asInstanceOf[ListArray]
          val base = a.offsets(0)
          var i = 1
          while (i <= a.length) { offsets(row + i) = a.offsets(i) - base + pos; i += 1 }
          row += a.length
          val len = a.offsets(a.length) - base
          pos += len
          slice(a.child, base, len)
        }
        new ListArray(n, nulls, offsets, concat(children))
      case s: StructArray =>
        val children = s.children.indices.map(c =>
          concat(parts.map(_.asInstanceOf[StructArray].children(c)))
        ).toArray
        new StructArray(n, nulls, children)
    }
  }

  /**
   * Dictionary parts as one dictionary array: ids remapped into the concatenation of their
   * distinct dictionaries (by identity; consecutive batches of one page share theirs). Null
   * when that dictionary would hold more entries than the rows it serves, where plain bytes
   * are cheaper.
   */
  private def concatDictionaries(parts: Seq[DictionaryArray]): DictionaryArray = {
    val n = checkedSize(parts.iterator.map(_.length.toLong).sum)
    val distinct = scala.collection.mutable.ArrayBuffer[StringDictionary]()
    parts.foreach(p => if (!distinct.exists(_ eq p.dictionary)) distinct += p.dictionary)
    if (distinct.size > 1 && distinct.iterator.map(_.size.toLong).sum > n) return null
    val (dict, bases) = StringDictionary.concat(distinct.toSeq)
    val ids = new Array[Int](n)
    val nulls: Array[Boolean] = if (parts.forall(_.nulls == null)) null else new Array[Boolean](n)
    var pos = 0
    parts.foreach { p =>
      val base = bases(distinct.indexWhere(_ eq p.dictionary))
      var i = 0
      if (base == 0) System.arraycopy(p.indices, 0, ids, pos, p.length)
      else while (i < p.length) { ids(pos + i) = p.indices(i) + base; i += 1 }
      if (p.nulls != null) System.arraycopy(p.nulls, 0, nulls, pos, p.length)
      pos += p.length
    }
    new DictionaryArray(n, nulls, ids, dict)
  }

  /** `a` with its dictionary ids resolved to bytes; any other array as it is. */
  def materialize(a: ColumnArray): ColumnArray = a match {
    case d: DictionaryArray => materialize(d)
    case other => other
  }

  /** The plain bytes of a dictionary array (null rows empty). */
  def materialize(a: DictionaryArray): VarBinaryArray = {
    val n = a.length
    val ids = a.indices
    val dv = a.dictionary.values
    val doff = dv.offsets
    val nl = a.nulls
    var total = 0L
    var i = 0
    while (i < n) {
      if (nl == null || !nl(i)) { val k = ids(i); total += doff(k + 1) - doff(k) }; i += 1
    }
    val data = new Array[Byte](checkedSize(total))
    val offsets = new Array[Int](n + 1)
    var pos = 0
    i = 0
    while (i < n) {
      if (nl == null || !nl(i)) {
        val k = ids(i); val s = doff(k); val len = doff(k + 1) - s
        System.arraycopy(dv.data, s, data, pos, len)
        pos += len
      }
      offsets(i + 1) = pos
      i += 1
    }
    new VarBinaryArray(n, nl, offsets, data)
  }

  /** The same values with a different null mask (no copy of the values). */
  def withNulls(array: ColumnArray, nulls: Array[Boolean]): ColumnArray = array match {
    case a: FixedWidthArray => new FixedWidthArray(a.length, nulls, a.byteWidth, a.data)
    case a: VarBinaryArray => new VarBinaryArray(a.length, nulls, a.offsets, a.data)
    case a: DictionaryArray => new DictionaryArray(a.length, nulls, a.indices, a.dictionary)
    case a: FixedSizeListArray => new FixedSizeListArray(a.length, nulls, a.dimension, a.child)
    case a: ListArray => new ListArray(a.length, nulls, a.offsets, a.child)
    case a: StructArray => new StructArray(a.length, nulls, a.children)
    case a: NullArray => a
  }

  /** `n` null rows shaped like `shape` (so they concatenate with decoded pages of that field). */
  def allNull(shape: ValueShape, n: Int): ColumnArray = {
    val nulls = new Array[Boolean](n)
    java.util.Arrays.fill(nulls, true)
    shape match {
      case ValueShape.Nulls => new NullArray(n)
      case ValueShape.Fixed(w, _) =>
        new FixedWidthArray(n, nulls, w, new Array[Byte](checkedSize(n.toLong * w)))
      case ValueShape.Var =>
        new VarBinaryArray(n, nulls, new Array[Int](n + 1), Array.emptyByteArray)
      case ValueShape.FixedList(d, item) =>
        new FixedSizeListArray(n, nulls, d, allNull(item, checkedSize(n.toLong * d)))
      case ValueShape.VarList(_, item) =>
        new ListArray(n, nulls, new Array[Int](n + 1), empty(item))
      case ValueShape.Struct(children) =>
        new StructArray(n, nulls, children.map { case (_, s) => allNull(s, n) }.toArray)
    }
  }

  def empty(shape: ValueShape): ColumnArray = shape match {
    case ValueShape.Nulls => new NullArray(0)
    case ValueShape.Fixed(w, _) => new FixedWidthArray(0, null, w, Array.emptyByteArray)
    case ValueShape.Var => new VarBinaryArray(0, null, new Array[Int](1), Array.emptyByteArray)
    case ValueShape.FixedList(d, item) => new FixedSizeListArray(0, null, d, empty(item))
    case ValueShape.VarList(_, item) => new ListArray(0, null, new Array[Int](1), empty(item))
    case ValueShape.Struct(children) =>
      new StructArray(0, null, children.map { case (_, s) => empty(s) }.toArray)
  }

  /** The end (exclusive) of the run of consecutive row indices starting at `i`. */
  @inline private def runEnd(idx: Array[Int], i: Int): Int = {
    var j = i + 1
    while (j < idx.length && idx(j) == idx(j - 1) + 1) j += 1
    j
  }

  private def takeNulls(nulls: Array[Boolean], idx: Array[Int]): Array[Boolean] = {
    if (nulls == null) return null
    val out = new Array[Boolean](idx.length)
    var any = false
    var i = 0
    while (i < idx.length) { val b = nulls(idx(i)); out(i) = b; any |= b; i += 1 }
    if (any) out else null
  }

  private def checkedSize(n: Long): Int = {
    if (n > Int.MaxValue - 16) throw new IllegalArgumentException(
      s"decoded batch too large: $n bytes or values; read fewer rows at a time"
    )
    n.toInt
  }
}
