package io.sparklance.format.writer

import io.sparklance.format._

/**
 * The structure of one leaf column of a 2.1/2.2 file: the fields on the path from its
 * top-level field down to it, and its rep/def layers (innermost first, as Lance lists them).
 *
 * Definition levels are computed in one canonical numbering in which every item layer owns
 * one level (null) and every list layer two (null, then empty); each page later renumbers
 * them to the layers it actually needs (see [[PageLevels]]). Repetition levels need no
 * renumbering: max_rep starts a row, q starts a new list at the q-th list from the inside.
 */
private[writer] final class LeafPath(val path: Array[LanceField]) {
  val leaf: LanceField = path.last
  val numLayers: Int = path.length

  /** isList(j) for layer j, innermost (the leaf) first. */
  val isList: Array[Boolean] = Array.tabulate(numLayers)(j =>
    j > 0 && path(numLayers - 1 - j).logicalType.isRepeated
  )
  val maxRep: Int = isList.count(identity)
  val nullLevel: Array[Int] = {
    val a = new Array[Int](numLayers); var next = 1; var j = 0
    while (j < numLayers) { a(j) = next; next += (if (isList(j)) 2 else 1); j += 1 }
    a
  }
  val maxDef: Int = nullLevel(numLayers - 1) + (if (isList(numLayers - 1)) 1 else 0)

  /** Canonical def levels at or below this own a value slot (no list between them and the leaf). */
  val maxVisibleDef: Int = {
    val firstList = isList.indexWhere(identity)
    if (firstList < 0) maxDef else nullLevel(firstList - 1)
  }

  /** A blob column is one leaf whose input values are its bytes, whatever its Lance type (v2 is a struct). */
  val isBlob: Boolean = io.sparklance.format.blob.BlobColumn.isBlob(leaf)

  /** A packed struct is one leaf whose values are its rows packed into bytes. */
  val isPacked: Boolean = PackedStructs.isPacked(leaf)
  val shape: ValueShape =
    if (isBlob) ValueShape.Var
    else if (isPacked) PackedStructs.shape(leaf)
    else ValueShape.ofType(leaf.logicalType, leaf)
}

private[writer] object LeafPath {

  /**
   * Every leaf of `f`, pre-order, with its path. A blob column is a leaf (one column of
   * descriptors), and so is a packed struct (one column of packed rows).
   */
  def leaves(f: LanceField): Seq[LeafPath] = {
    def go(prefix: Vector[LanceField], g: LanceField): Seq[LeafPath] =
      if (
        g.children.isEmpty || io.sparklance.format.blob.BlobColumn.isBlob(
          g
        ) || PackedStructs.isPacked(g)
      )
        Seq(new LeafPath((prefix :+ g).toArray))
      else g.children.flatMap(c => go(prefix :+ g, c))
    go(Vector.empty, f)
  }
}

/**
 * One batch of a leaf column, shredded: its levels (null when the leaf has none, or, for a
 * top-level leaf, when no row is null: all levels 0) and, for each visible item, the index of
 * its value in `values` (-1 for a visible item with no value, such as the child of a null
 * struct); `visibleIdx` null when item `k` is value `k` for every item.
 */
private[writer] final class Shredded(
    val numLevels: Int,
    val rep: Array[Short],
    val defs: Array[Short],
    val values: ColumnArray,
    val visibleIdx: Array[Int],
    val numVisible: Int
)

private[writer] object Shredder {

  /** Shreds the rows of top-level array `top` down to the leaf of `lp`. */
  def shred(lp: LeafPath, top: ColumnArray): Shredded =
    if (lp.numLayers == 1) flat(lp, top) else nested(lp, top)

  /**
   * A top-level leaf: one level per row (a null row gets the leaf's null level), every row
   * visible, its value at its own index — what [[nested]] gives, without its per-layer work;
   * without a null row, neither levels nor indices (all 0, and each row its own value).
   */
  private def flat(lp: LeafPath, a: ColumnArray): Shredded = {
    val n = a.length
    val nulls = a.nulls
    if (nulls == null) return new Shredded(n, null, null, a, null, n)
    val vis = new Array[Int](n)
    val defs = if (lp.maxDef > 0) new Array[Short](n) else null
    val nullLevel = lp.nullLevel(0).toShort
    var s = 0
    while (s < n) {
      if (nulls(s)) { vis(s) = -1; if (defs != null) defs(s) = nullLevel }
      else vis(s) = s
      s += 1
    }
    new Shredded(n, null, defs, a, vis, n)
  }

  private def nested(lp: LeafPath, top: ColumnArray): Shredded = {
    var n = top.length
    var rep: Array[Short] = if (lp.maxRep > 0) Array.fill(n)(lp.maxRep.toShort) else null
    var defs = new Array[Short](n)
    var idx = new Array[Int](n)
    locally { var i = 0; while (i < n) { idx(i) = i; i += 1 } }
    var cur: ColumnArray = top
    var listsAbove = lp.maxRep
    var d = 0
    while (d < lp.numLayers) {
      val j = lp.numLayers - 1 - d
      val f = lp.path(d)
      val a = cur
      if (j == 0) {
        // The leaf: a null value is a null item (still visible).
        var s = 0
        while (s < n) {
          val i = idx(s); if (i >= 0 && a.isNull(i)) defs(s) = lp.nullLevel(0).toShort; s += 1
        }
      } else if (lp.isList(j)) {
        val q = listsAbove
        listsAbove -= 1
        val (offsets, child) = a match {
          case l: ListArray => (l.offsets, l.child)
          case _: NullArray => (null, new NullArray(0))
          case other => throw new IllegalArgumentException(
              s"field '${f.name}' is a list but got ${other.getClass.getSimpleName}"
            )
        }
        var total = 0
        var s = 0
        while (s < n) {
          val i = idx(s)
          if (i < 0 || a.isNull(i)) total += 1
          else { val len = offsets(i + 1) - offsets(i); total += math.max(len, 1) }
          s += 1
        }
        val nRep = new Array[Short](total); val nDef = new Array[Short](total);
        val nIdx = new Array[Int](total)
        var o = 0
        s = 0
        while (s < n) {
          val i = idx(s)
          if (i < 0) { nRep(o) = rep(s); nDef(o) = defs(s); nIdx(o) = -1; o += 1 }
          else if (a.isNull(i)) {
            nRep(o) = rep(s); nDef(o) = lp.nullLevel(j).toShort; nIdx(o) = -1; o += 1
          } else {
            val start = offsets(i); val len = offsets(i + 1) - start
            if (len == 0) {
              nRep(o) = rep(s); nDef(o) = (lp.nullLevel(j) + 1).toShort; nIdx(o) = -1; o += 1
            } else {
              var k = 0
              while (k < len) {
                nRep(o) = if (k == 0) rep(s) else (q - 1).toShort
                nIdx(o) = start + k
                o += 1; k += 1
              }
            }
          }
          s += 1
        }
        rep = nRep; defs = nDef; idx = nIdx; n = total
        cur = child
      } else {
        // A struct (or map entries): null kills the slot, which stays visible unless a list is above.
        var s = 0
        while (s < n) {
          val i = idx(s)
          if (i >= 0 && a.isNull(i)) { defs(s) = lp.nullLevel(j).toShort; idx(s) = -1 }
          s += 1
        }
        val next = lp.path(d + 1)
        cur = a match {
          case st: StructArray => st.children(f.children.indexWhere(_ eq next))
          case _: NullArray => new NullArray(0)
          case other => throw new IllegalArgumentException(
              s"field '${f.name}' is a struct but got ${other.getClass.getSimpleName}"
            )
        }
      }
      d += 1
    }
    // Visible items: those with def <= maxVisibleDef.
    val vis = new Array[Int](n)
    var nv = 0
    var s = 0
    val mv = lp.maxVisibleDef
    while (s < n) {
      if (defs(s) <= mv) {
        vis(nv) = if (defs(s) == 0) idx(s) else -1
        nv += 1
      }
      s += 1
    }
    new Shredded(n, rep, if (lp.maxDef > 0) defs else null, cur, vis, nv)
  }
}
