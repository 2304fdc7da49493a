package io.sparklance.format

/** Operations over decoded arrays. */
object ColumnArrays {
  /** The rows `rows` (ascending indices) of `a`, e.g. to drop deleted rows. */
  def take(a: ColumnArray, rows: Array[Int]): ColumnArray = {
    val n = rows.length
    val nulls = if (a.nulls == null) null else { val r = new Array[Boolean](n); var i = 0; while (i < n) { r(i) = a.nulls(rows(i)); i += 1 }; r }
    a match {
      case f: FixedWidthArray =>
        val w = f.byteWidth
        val out = new Array[Byte](n * w)
        var i = 0
        while (i < n) { System.arraycopy(f.data, rows(i) * w, out, i * w, w); i += 1 }
        new FixedWidthArray(n, nulls, w, out)
      case v: VarBinaryArray =>
        val offs = new Array[Int](n + 1)
        var i = 0
        while (i < n) { offs(i + 1) = offs(i) + v.offsets(rows(i) + 1) - v.offsets(rows(i)); i += 1 }
        val out = new Array[Byte](offs(n))
        i = 0
        while (i < n) { System.arraycopy(v.data, v.offsets(rows(i)), out, offs(i), offs(i + 1) - offs(i)); i += 1 }
        new VarBinaryArray(n, nulls, offs, out)
      case l: ListArray =>
        val (offs, childRows) = ranges(rows, i => l.offsets(i), i => l.offsets(i + 1))
        new ListArray(n, nulls, offs, take(l.child, childRows))
      case l: FixedSizeListArray =>
        val d = l.dimension
        val (_, childRows) = ranges(rows, i => i * d, i => (i + 1) * d)
        new FixedSizeListArray(n, nulls, d, take(l.child, childRows))
      case s: StructArray => new StructArray(n, nulls, s.children.map(take(_, rows)))
      case _: NullArray => new NullArray(n)
    }
  }

  /** New offsets and the child rows covered by the ranges `[start(r), end(r))` of `rows`. */
  private def ranges(rows: Array[Int], start: Int => Int, end: Int => Int): (Array[Int], Array[Int]) = {
    val n = rows.length
    val offs = new Array[Int](n + 1)
    var i = 0
    while (i < n) { offs(i + 1) = offs(i) + end(rows(i)) - start(rows(i)); i += 1 }
    val child = new Array[Int](offs(n))
    i = 0
    while (i < n) {
      var j = start(rows(i)); var k = offs(i)
      while (k < offs(i + 1)) { child(k) = j; j += 1; k += 1 }
      i += 1
    }
    (offs, child)
  }
}
