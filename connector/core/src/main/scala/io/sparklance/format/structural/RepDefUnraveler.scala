package io.sparklance.format.structural

/**
 * The shape of every layer of one leaf over a batch, rebuilt from its rep/def levels: how many
 * slots the layer has, which are null, and for list layers the offsets into the next inner
 * layer. Struct, list and leaf arrays of the assembled field tree take these directly.
 *
 * Each level creates one slot in a contiguous band of layers. The band's top follows from the
 * repetition level: max_rep starts a new top-level row (every layer), rep r < max_rep adds an
 * element to list number r+1 counted from the innermost (the layers inside that list). The
 * band's bottom follows from the definition level: a valid item reaches the leaf; a null or
 * empty list stops at that list; a null struct/item still gives slots to the layers below it
 * (struct children are parallel arrays) down to and including the first list, which is then
 * a null list with no items. A layer is null in a slot when the definition level belongs to a
 * layer at or above it (an empty list is valid).
 *
 * A fixed-size list layer (of structs) is unravelled as an item layer first, which gives it
 * and every layer above it one slot per level row; then those layers keep every
 * dimension-th slot: the writer repeats the levels of a fixed-size list value for each of
 * its items, so the first of each group speaks for the value.
 */
private[structural] final class Unraveled(
    val count: Array[Int],
    val nulls: Array[Array[Boolean]],
    val offsets: Array[Array[Int]]
)

private[structural] object RepDefUnraveler {
  def unravel(b: LeafBatch, ref: => String): Unraveled = {
    val L = b.layers; val nl = L.numLayers; val n = b.n
    val count = new Array[Int](nl)
    val nulls = new Array[Array[Boolean]](nl)
    val offsets = new Array[Array[Int]](nl)
    val defs = b.defs
    if (L.maxRep == 0) {
      java.util.Arrays.fill(count, n)
      if (defs != null) {
        var j = 0
        while (j < nl) {
          var a: Array[Boolean] = null; var i = 0
          while (i < n) {
            val d = defs(i)
            if (d != 0 && L.owner(d) >= j) { if (a == null) a = new Array[Boolean](n); a(i) = true }
            i += 1
          }
          nulls(j) = a; j += 1
        }
      }
      return decimateFsl(L, count, nulls, offsets, ref)
    }

    val rep = b.rep; val maxRep = L.maxRep
    val top = new Array[Int](maxRep + 1)
    var r = 0
    while (r <= maxRep) { top(r) = if (r == maxRep) nl - 1 else L.listLayer(r + 1) - 1; r += 1 }
    val maxDef = L.maxDef
    val bottom = new Array[Int](maxDef + 1)
    var d0 = 1
    while (d0 <= maxDef) {
      val o = L.owner(d0)
      bottom(d0) = if (L.isList(o)) o
      else { var k = o - 1; while (k > 0 && !L.isList(k)) k -= 1; math.max(k, 0) }
      d0 += 1
    }
    val cap = new Array[Int](nl)
    var j = 0
    while (j < nl) {
      if (L.isList(j)) { offsets(j) = new Array[Int](math.max(16, n + 1)) };
      cap(j) = math.max(16, n); j += 1
    }

    var i = 0
    while (i < n) {
      val rv = rep(i)
      if (rv < 0 || rv > maxRep)
        throw new IllegalStateException(s"$ref: repetition level $rv exceeds $maxRep")
      val d = if (defs == null) 0 else defs(i).toInt
      if (d > maxDef) throw new IllegalStateException(s"$ref: definition level $d exceeds $maxDef")
      val t = top(rv); val bt = if (d == 0) 0 else bottom(d)
      if (bt > t) throw new IllegalStateException(
        s"$ref: definition level $d contradicts repetition level $rv at level $i"
      )
      val own = if (d == 0) -1 else L.owner(d)
      var k = t
      while (k >= bt) {
        val c = count(k)
        if (L.isList(k)) {
          var o = offsets(k)
          if (c + 2 > o.length) { o = java.util.Arrays.copyOf(o, o.length * 2); offsets(k) = o }
          o(c) = count(k - 1)
        }
        val isNull = own > k || (own == k && !L.isEmptyLevel(d))
        if (isNull) {
          var a = nulls(k)
          if (a == null) { a = new Array[Boolean](math.max(cap(k), c + 1)); nulls(k) = a }
          else if (c >= a.length) {
            a = java.util.Arrays.copyOf(a, math.max(c + 1, a.length * 2)); nulls(k) = a
          }
          a(c) = true
        }
        count(k) = c + 1
        k -= 1
      }
      i += 1
    }
    j = 0
    while (j < nl) {
      if (L.isList(j)) {
        offsets(j)(count(j)) = count(j - 1);
        offsets(j) = java.util.Arrays.copyOf(offsets(j), count(j) + 1)
      }
      if (nulls(j) != null && nulls(j).length != count(j))
        nulls(j) = java.util.Arrays.copyOf(nulls(j), count(j))
      j += 1
    }
    decimateFsl(L, count, nulls, offsets, ref)
  }

  /** Folds the slots of fixed-size list layers, and of every layer above them, by the dimensions. */
  private def decimateFsl(
      L: Layers,
      count: Array[Int],
      nulls: Array[Array[Boolean]],
      offsets: Array[Array[Int]],
      ref: => String
  ): Unraveled = {
    if (!L.hasFsl) return new Unraveled(count, nulls, offsets)
    var stride = 1L
    var j = 0
    while (j < L.numLayers) {
      if (L.fslDim(j) > 0) stride *= L.fslDim(j)
      if (stride > 1) {
        if (L.isList(j))
          throw new IllegalStateException(s"$ref: a list above a fixed-size list of structs")
        if (count(j) % stride != 0)
          throw new IllegalStateException(
            s"$ref: ${count(j)} level rows are not whole fixed-size lists of $stride items"
          )
        val m = (count(j) / stride).toInt
        val a = nulls(j)
        if (a != null) {
          val out = new Array[Boolean](m); var any = false; var s = 0
          while (s < m) { val x = a((s * stride).toInt); out(s) = x; any |= x; s += 1 }
          nulls(j) = if (any) out else null
        }
        count(j) = m
      }
      j += 1
    }
    new Unraveled(count, nulls, offsets)
  }
}
