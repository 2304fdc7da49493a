package io.sparklance.table.index

/**
 * The orders Rust's standard library puts graph nodes in, for building HNSW graphs exactly as
 * pylance 14 (compiled Rust) does: a node is an id and a float distance, nodes compare by
 * distance alone (`f32::total_cmp`), so which of two nodes at equal distance comes first is
 * decided by the algorithm — here the same as Rust's, step for step:
 *  - [[sortUnstable]]: `slice::sort_unstable` (insertion sort up to 20 elements, else
 *    ipnsort: an existing run kept or reversed, else quicksort with the pseudo-median pivot,
 *    Lomuto branchless cyclic partitions, the equal-to-ancestor partition, a small sort up to
 *    32 elements and heapsort past the recursion limit);
 *  - [[RustHeap]]: `collections::BinaryHeap` (push, pop, peek, into_sorted_vec).
 * Rust's small sort depends on the element type: for Lance's `OrderedNode` (not `Copy`) it is
 * `small_sort_general`, a stable sort; for an 8-byte `Copy` tuple `(u32, f32)` it is
 * `small_sort_network` (`copyTuples`): each half (or the whole, under 18 elements) sorted by
 * the optimal 13- or 9-element network then insertion, the halves then merged stably.
 * Nodes live in parallel arrays `ids` / `dists`.
 */
private[index] object RustOrder {
  @inline def less(a: Float, b: Float): Boolean = java.lang.Float.compare(a, b) < 0

  /**
   * Sorts `ids(from until to)` / `dists(...)` by distance as `sort_unstable` does for
   * `OrderedNode`s, or with `copyTuples` for `(u32, f32)` tuples.
   */
  def sortUnstable(
      ids: Array[Int],
      dists: Array[Float],
      from: Int,
      to: Int,
      copyTuples: Boolean = false
  ): Unit = {
    val n = to - from
    if (n < 2) return
    if (n <= 20) { insertion(ids, dists, from, to); return }
    val desc = less(dists(from + 1), dists(from))
    var run = 2
    if (desc) while (run < n && less(dists(from + run), dists(from + run - 1))) run += 1
    else while (run < n && !less(dists(from + run), dists(from + run - 1))) run += 1
    if (run == n) {
      if (desc) reverse(ids, dists, from, to)
      return
    }
    val log2 = 31 - Integer.numberOfLeadingZeros(n | 1)
    quicksort(ids, dists, from, to, -1, 0f, 2 * log2, copyTuples)
  }

  // The optimal sorting networks of Rust's `sort9_optimal` and `sort13_optimal` (pairs).
  private val Net9 = Array(0, 3, 1, 7, 2, 5, 4, 8, 0, 7, 2, 4, 3, 8, 5, 6, 0, 2, 1, 3, 4, 5, 7, 8,
    1, 4, 3, 6, 5, 7, 0, 1, 2, 4, 3, 5, 6, 8, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6)
  private val Net13 = Array(0, 12, 1, 10, 2, 9, 3, 7, 5, 11, 6, 8, 1, 6, 2, 3, 4, 11, 7, 9, 8, 10,
    0, 4, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 4, 6, 5, 9, 8, 11, 10, 12, 0, 5, 3, 8, 4, 7, 6, 11,
    9, 10, 0, 1, 2, 5, 6, 9, 7, 8, 10, 11, 1, 3, 2, 4, 5, 6, 9, 10, 1, 2, 3, 4, 5, 7, 6, 8,
    2, 3, 4, 5, 6, 7, 8, 9, 3, 4, 5, 6)

  /** Rust's `small_sort_network`. */
  private def smallNetwork(ids: Array[Int], dists: Array[Float], from: Int, to: Int): Unit = {
    val n = to - from
    if (n < 2) return
    if (n < 18) { networkRegion(ids, dists, from, to); return }
    val half = n / 2
    networkRegion(ids, dists, from, from + half)
    networkRegion(ids, dists, from + half, to)
    // The stable merge of the two sorted halves (what bidirectional_merge yields).
    val li = java.util.Arrays.copyOfRange(ids, from, from + half)
    val ld = java.util.Arrays.copyOfRange(dists, from, from + half)
    val ri = java.util.Arrays.copyOfRange(ids, from + half, to)
    val rd = java.util.Arrays.copyOfRange(dists, from + half, to)
    var (i, j, k) = (0, 0, from)
    while (i < li.length && j < ri.length) {
      if (!less(rd(j), ld(i))) { ids(k) = li(i); dists(k) = ld(i); i += 1 }
      else { ids(k) = ri(j); dists(k) = rd(j); j += 1 }
      k += 1
    }
    while (i < li.length) { ids(k) = li(i); dists(k) = ld(i); i += 1; k += 1 }
    while (j < ri.length) { ids(k) = ri(j); dists(k) = rd(j); j += 1; k += 1 }
  }

  private def networkRegion(ids: Array[Int], dists: Array[Float], from: Int, to: Int): Unit = {
    val n = to - from
    val (net, presorted) = if (n >= 13) (Net13, 13) else if (n >= 9) (Net9, 9) else (null, 1)
    if (net != null) {
      var c = 0
      while (c < net.length) {
        val (a, b) = (from + net(c), from + net(c + 1))
        if (less(dists(b), dists(a))) swap(ids, dists, a, b)
        c += 2
      }
    }
    insertion(ids, dists, from, to, presorted)
  }

  private def insertion(
      ids: Array[Int],
      dists: Array[Float],
      from: Int,
      to: Int,
      presorted: Int = 1
  ): Unit = {
    var i = from + presorted
    while (i < to) {
      val id = ids(i)
      val d = dists(i)
      var j = i
      while (j > from && less(d, dists(j - 1))) {
        ids(j) = ids(j - 1); dists(j) = dists(j - 1); j -= 1
      }
      ids(j) = id; dists(j) = d
      i += 1
    }
  }

  private def reverse(ids: Array[Int], dists: Array[Float], from: Int, to: Int): Unit = {
    var i = from
    var j = to - 1
    while (i < j) { swap(ids, dists, i, j); i += 1; j -= 1 }
  }

  @inline private def swap(ids: Array[Int], dists: Array[Float], i: Int, j: Int): Unit = {
    val t = ids(i); ids(i) = ids(j); ids(j) = t
    val u = dists(i); dists(i) = dists(j); dists(j) = u
  }

  /** Rust's `quicksort`; `ancestor` is the index of the ancestor pivot or -1. */
  private def quicksort(
      ids: Array[Int],
      dists: Array[Float],
      from0: Int,
      to: Int,
      ancestor0: Int,
      ancestorDist0: Float,
      limit0: Int,
      copyTuples: Boolean
  ): Unit = {
    var from = from0
    var hasAncestor = ancestor0 >= 0
    var ancestorDist = ancestorDist0
    var limit = limit0
    while (true) {
      val n = to - from
      if (n <= 32) {
        if (copyTuples) smallNetwork(ids, dists, from, to) else insertion(ids, dists, from, to)
        return
      }
      if (limit == 0) { heapsort(ids, dists, from, to); return }
      limit -= 1
      val p = choosePivot(dists, from, n)
      if (hasAncestor && !less(ancestorDist, dists(p))) {
        // Everything left is >= the ancestor pivot: split off the elements equal to it.
        val lt = partition(ids, dists, from, to, p, lessOrEqual = true)
        from = from + lt + 1
        hasAncestor = false
      } else {
        val lt = partition(ids, dists, from, to, p, lessOrEqual = false)
        quicksort(
          ids,
          dists,
          from,
          from + lt,
          if (hasAncestor) 0 else -1,
          ancestorDist,
          limit,
          copyTuples
        )
        hasAncestor = true
        ancestorDist = dists(from + lt)
        from = from + lt + 1
      }
    }
  }

  private def median3(d: Array[Float], a: Int, b: Int, c: Int): Int = {
    val x = less(d(a), d(b))
    val y = less(d(a), d(c))
    if (x == y) { if (less(d(b), d(c)) ^ x) c else b }
    else a
  }

  private def median3Rec(d: Array[Float], a0: Int, b0: Int, c0: Int, n: Int): Int = {
    var (a, b, c) = (a0, b0, c0)
    if (n * 8 >= 64) {
      val n8 = n / 8
      a = median3Rec(d, a, a + n8 * 4, a + n8 * 7, n8)
      b = median3Rec(d, b, b + n8 * 4, b + n8 * 7, n8)
      c = median3Rec(d, c, c + n8 * 4, c + n8 * 7, n8)
    }
    median3(d, a, b, c)
  }

  private def choosePivot(d: Array[Float], from: Int, n: Int): Int = {
    val n8 = n / 8
    val (a, b, c) = (from, from + n8 * 4, from + n8 * 7)
    if (n < 64) median3(d, a, b, c) else median3Rec(d, a, b, c, n8)
  }

  /**
   * Rust's `partition` with the Lomuto branchless cyclic scheme: the pivot moved to the front,
   * the rest partitioned by `< pivot` (or `<= pivot`), the pivot put between; how many went
   * left.
   */
  private def partition(
      ids: Array[Int],
      dists: Array[Float],
      from: Int,
      to: Int,
      p: Int,
      lessOrEqual: Boolean
  ): Int = {
    swap(ids, dists, from, p)
    val pivot = dists(from)
    def goesLeft(d: Float) = if (lessOrEqual) !less(pivot, d) else less(d, pivot)
    val base = from + 1
    if (to - base == 0) return 0
    val gapId = ids(base)
    val gapDist = dists(base)
    var gap = base
    var lt = 0
    var r = base + 1
    while (r < to) {
      val id = ids(r)
      val d = dists(r)
      val left = goesLeft(d)
      ids(gap) = ids(base + lt); dists(gap) = dists(base + lt)
      ids(base + lt) = id; dists(base + lt) = d
      gap = r
      if (left) lt += 1
      r += 1
    }
    val left = goesLeft(gapDist)
    ids(gap) = ids(base + lt); dists(gap) = dists(base + lt)
    ids(base + lt) = gapId; dists(base + lt) = gapDist
    if (left) lt += 1
    swap(ids, dists, from, from + lt)
    lt
  }

  private def heapsort(ids: Array[Int], dists: Array[Float], from: Int, to: Int): Unit = {
    val n = to - from
    def sift(end: Int, node0: Int): Unit = {
      var node = node0
      var done = false
      while (!done) {
        var child = 2 * node + 1
        if (child >= end) done = true
        else {
          if (child + 1 < end && less(dists(from + child), dists(from + child + 1))) child += 1
          if (!less(dists(from + node), dists(from + child))) done = true
          else { swap(ids, dists, from + node, from + child); node = child }
        }
      }
    }
    var i = n + n / 2 - 1
    while (i >= 0) {
      if (i >= n) sift(n, i - n)
      else { swap(ids, dists, from, from + i); sift(i, 0) }
      i -= 1
    }
  }
}

/**
 * Rust's `BinaryHeap` of nodes: a max-heap by distance, or with `min` a heap of
 * `Reverse(node)` (smallest distance on top), with Rust's sift order, so that nodes at equal
 * distances come out in Rust's order.
 */
private[index] final class RustHeap(capacity: Int, min: Boolean) {
  private var ids = new Array[Int](math.max(capacity, 4))
  private var dists = new Array[Float](math.max(capacity, 4))
  private var n = 0

  def size: Int = n
  def isEmpty: Boolean = n == 0
  def clear(): Unit = n = 0
  def topId: Int = ids(0)
  def topDist: Float = dists(0)

  /** Whether a <= b in the heap's order. */
  @inline private def le(a: Float, b: Float): Boolean =
    if (min) java.lang.Float.compare(b, a) <= 0 else java.lang.Float.compare(a, b) <= 0

  private def siftUp(start: Int, pos0: Int, id: Int, d: Float): Unit = {
    var pos = pos0
    var stop = false
    while (!stop && pos > start) {
      val parent = (pos - 1) / 2
      if (le(d, dists(parent))) stop = true
      else { ids(pos) = ids(parent); dists(pos) = dists(parent); pos = parent }
    }
    ids(pos) = id; dists(pos) = d
  }

  def push(id: Int, d: Float): Unit = {
    if (n == ids.length) {
      ids = java.util.Arrays.copyOf(ids, n * 2); dists = java.util.Arrays.copyOf(dists, n * 2)
    }
    n += 1
    siftUp(0, n - 1, id, d)
  }

  /** Removes the top; read it with [[topId]] / [[topDist]] first. */
  def pop(): Unit = {
    n -= 1
    if (n > 0) {
      val id = ids(n)
      val d = dists(n)
      // sift_down_to_bottom from 0, then sift_up.
      var pos = 0
      var child = 1
      while (child <= n - 2) {
        if (le(dists(child), dists(child + 1))) child += 1
        ids(pos) = ids(child); dists(pos) = dists(child)
        pos = child
        child = 2 * pos + 1
      }
      if (child == n - 1) { ids(pos) = ids(child); dists(pos) = dists(child); pos = child }
      siftUp(0, pos, id, d)
    }
  }

  /**
   * Rust's `into_sorted_vec` (ascending in the heap's order) into `outIds` / `outDists`;
   * returns the count. The heap is left empty.
   */
  def drainSorted(outIds: Array[Int], outDists: Array[Float]): Int = {
    var end = n
    while (end > 1) {
      end -= 1
      val (ti, td) = (ids(0), dists(0))
      ids(0) = ids(end); dists(0) = dists(end); ids(end) = ti; dists(end) = td
      siftDownRange(0, end)
    }
    System.arraycopy(ids, 0, outIds, 0, n)
    System.arraycopy(dists, 0, outDists, 0, n)
    val k = n
    n = 0
    k
  }

  private def siftDownRange(pos0: Int, end: Int): Unit = {
    var pos = pos0
    val id = ids(pos)
    val d = dists(pos)
    var child = 2 * pos + 1
    while (child <= end - 2) {
      if (le(dists(child), dists(child + 1))) child += 1
      if (le(dists(child), d)) { ids(pos) = id; dists(pos) = d; return }
      ids(pos) = ids(child); dists(pos) = dists(child)
      pos = child
      child = 2 * pos + 1
    }
    if (child == end - 1 && !le(dists(child), d)) {
      ids(pos) = ids(child); dists(pos) = dists(child); pos = child
    }
    ids(pos) = id; dists(pos) = d
  }
}
