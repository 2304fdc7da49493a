package io.sparklance.table.index

/**
 * An IVF partition's HNSW graph carried across a compaction that deleted some of its rows, as
 * pylance 14 repairs it (found against pylance 14.0.2, whose result is deterministic and which
 * this reproduces edge for edge and bit for bit). pylance does not rebuild the graph: nodes
 * keep their levels and the surviving order (new ids are the survivors renumbered), edges
 * between survivors keep their stored distances, and
 *  1. per level, each deleted node's surviving neighbours ("a hole") are linked to each other,
 *     nearest first, while they have fewer edges than before the deletion; a deleted entry
 *     point is replaced by its nearest surviving neighbour on the highest level that has one
 *     (else by the first node of the highest level that kept one);
 *  2. from the top level down, every node that lost an edge gets a new list: a greedy descent
 *     from the entry point through the levels above, a beam search of `ef_construction`
 *     (at most the partition's size) on its level, then Lance's neighbour selection heuristic
 *     (Algorithm 4 of the HNSW paper, keeping pruned candidates to fill up) over the beam and
 *     its current neighbours, keeping as many as it had before; then every edge gets its
 *     reverse, a list grown past its old degree being cut back with the same heuristic;
 *  3. level-0 nodes the entry point no longer reaches are linked back (Lance's stranded-node
 *     linker: an anchor found by a greedy walk gets one more edge).
 * New distances come from the partition's remapped storage ([[HnswDistances]]); ties between
 * equal distances fall as Rust's sorts and heaps leave them ([[RustOrder]], [[RustHeap]]).
 */
private[index] final class HnswGraphRepair(
    graph: HnswGraph,
    newIds: Array[Int],
    store: HnswDistances,
    efConstruction: Int
) {
  private val kept = store.size
  private val levels = new Array[HnswLevel](graph.numLevels)
  // Search scratch, reused by every search.
  private val stamp = new Array[Int](kept)
  private var generation = 0
  private val candidates = new RustHeap(64, min = true)
  private val results = new RustHeap(64, min = false)
  private var bufIds = new Array[Int](256)
  private var bufDists = new Array[Float](256)
  private var outIds = new Array[Int](256)
  private var outDists = new Array[Float](256)
  private var prunedIds = new Array[Int](256)
  private var prunedDists = new Array[Float](256)

  /** The repaired graph (the input graph when nothing was deleted). */
  def run(): HnswGraph = {
    if (newIds.indices.forall(i => newIds(i) == i)) return graph
    if (kept == 0) return HnswGraph(
      0,
      Array.fill(graph.levelOffsets.length)(0),
      Array.empty,
      Array(0),
      Array.empty,
      Array.empty
    )
    var replacement = -1
    var highestFirst = -1
    var l = 0
    while (l < levels.length) {
      val r = levelFromRows(l)
      if (r >= 0) replacement = r
      if (levels(l).orderSize > 0) highestFirst = levels(l).order(0)
      l += 1
    }
    val oldEntry = graph.entryPoint
    val entry =
      if (oldEntry >= 0 && oldEntry < newIds.length && newIds(oldEntry) >= 0) newIds(oldEntry)
      else if (replacement >= 0) replacement
      else highestFirst
    val ef = math.max(1, math.min(efConstruction, math.max(kept, 1)))
    l = levels.length - 1
    while (l >= 0) {
      if (levels(l).damagedSize > 0) reselect(l, entry, ef)
      l -= 1
    }
    if (levels.nonEmpty) new HnswStrandedLinker(levels(0), store).link(entry, efConstruction)
    output(entry)
  }

  /**
   * Level `l` from the graph's rows: survivors' surviving edges, holes linked; the nearest
   * surviving neighbour of a deleted entry point on this level, or -1.
   */
  private def levelFromRows(l: Int): Int = {
    val level = new HnswLevel(kept)
    levels(l) = level
    var replacement = -1
    val holes = scala.collection.mutable.ArrayBuffer.empty[Array[Int]]
    var row = graph.levelOffsets(l)
    while (row < graph.levelOffsets(l + 1)) {
      val old = graph.nodeIds(row)
      val node = newIds(old)
      val (from, to) = (graph.edgeOffsets(row), graph.edgeOffsets(row + 1))
      if (node < 0) {
        var best = -1
        var bestDist = 0f
        var survivors = 0
        var e = from
        while (e < to) {
          val nb = newIds(graph.edgeIds(e))
          if (nb >= 0) {
            survivors += 1
            if (best < 0 || RustOrder.less(graph.edgeDists(e), bestDist)) {
              best = nb; bestDist = graph.edgeDists(e)
            }
          }
          e += 1
        }
        if (old == graph.entryPoint && best >= 0) replacement = best
        if (survivors > 1) {
          val hole = new Array[Int](survivors)
          var k = 0
          e = from
          while (e < to) {
            val nb = newIds(graph.edgeIds(e))
            if (nb >= 0) { hole(k) = nb; k += 1 }
            e += 1
          }
          holes += hole
        }
      } else {
        level.on(node) = true
        level.addOrdered(node)
        level.target(node) = to - from
        var e = from
        while (e < to) {
          val nb = newIds(graph.edgeIds(e))
          if (nb >= 0) level.add(node, nb, graph.edgeDists(e))
          e += 1
        }
        if (level.sizes(node) < to - from) level.addDamaged(node)
      }
      row += 1
    }
    holes.foreach(fillHole(level, _))
    replacement
  }

  /** Links the survivors of one hole to each other, nearest first, up to their old degree. */
  private def fillHole(level: HnswLevel, hole: Array[Int]): Unit = {
    ensure(hole.length)
    var h = 0
    while (h < hole.length) {
      val node = hole(h)
      if (level.on(node) && level.sizes(node) < level.target(node)) {
        var m = 0
        var o = 0
        while (o < hole.length) {
          val other = hole(o)
          if (other != node && !level.linked(node, other)) {
            bufIds(m) = other; bufDists(m) = store.distance(node, other); m += 1
          }
          o += 1
        }
        RustOrder.sortUnstable(bufIds, bufDists, 0, m, copyTuples = true)
        var i = 0
        while (i < m && level.sizes(node) < level.target(node)) {
          if (!level.linked(node, bufIds(i))) level.add(node, bufIds(i), bufDists(i))
          i += 1
        }
      }
      h += 1
    }
  }

  /** Grows the scratch arrays (keeping what they hold) to at least `n`. */
  private def ensure(n: Int): Unit = if (bufIds.length < n) {
    val cap = math.max(n, bufIds.length * 2)
    bufIds = java.util.Arrays.copyOf(bufIds, cap); bufDists = java.util.Arrays.copyOf(bufDists, cap)
    outIds = java.util.Arrays.copyOf(outIds, cap); outDists = java.util.Arrays.copyOf(outDists, cap)
    prunedIds = new Array[Int](cap); prunedDists = new Array[Float](cap)
  }

  /** New lists for level `l`'s damaged nodes (all chosen on the level as it was), reverses. */
  private def reselect(l: Int, entry: Int, ef: Int): Unit = {
    val level = levels(l)
    val chosenIds = new Array[Array[Int]](level.damagedSize)
    val chosenDists = new Array[Array[Float]](level.damagedSize)
    var i = 0
    while (i < level.damagedSize) {
      val node = level.damaged(i)
      val n = choose(l, entry, node, ef)
      chosenIds(i) = java.util.Arrays.copyOf(outIds, n)
      chosenDists(i) = java.util.Arrays.copyOf(outDists, n)
      i += 1
    }
    i = 0
    while (i < level.damagedSize) {
      level.set(level.damaged(i), chosenIds(i), chosenDists(i), chosenIds(i).length)
      i += 1
    }
    addReciprocals(level)
  }

  /** The new list of `node` on level `l` into `outIds` / `outDists`; its length. */
  private def choose(l: Int, entry: Int, node: Int, ef: Int): Int = {
    val level = levels(l)
    var ep = if (level.on(entry)) entry else node
    var h = levels.length - 1
    while (h > l) {
      if (levels(h).on(ep)) ep = greedy(levels(h), ep, store.distance(node, ep), node)
      h -= 1
    }
    if (!level.on(ep)) ep = node
    val found = beam(level, ep, store.distance(node, ep), ef, node)
    // Candidates: the beam (nearest first), then the current neighbours, each once.
    ensure(found + level.sizes(node))
    generation += 1
    var m = 0
    var i = 0
    while (i < found) {
      val id = outIds(i)
      if (id != node && stamp(id) != generation) {
        stamp(id) = generation; bufIds(m) = id; bufDists(m) = outDists(i); m += 1
      }
      i += 1
    }
    i = 0
    while (i < level.sizes(node)) {
      val id = level.ids(node)(i)
      if (id != node && stamp(id) != generation) {
        stamp(id) = generation; bufIds(m) = id; bufDists(m) = level.dists(node)(i); m += 1
      }
      i += 1
    }
    if (m == 0) {
      val s = level.sizes(node)
      System.arraycopy(level.ids(node), 0, outIds, 0, s)
      System.arraycopy(level.dists(node), 0, outDists, 0, s)
      return s
    }
    select(m, math.max(level.target(node), 1))
  }

  /** Greedy descent on one level from `start` towards `query`; the node it stops at. */
  private def greedy(level: HnswLevel, start: Int, startDist: Float, query: Int): Int = {
    var current = start
    var closest = startDist
    var moved = true
    while (moved) {
      var next = -1
      val ids = level.ids(current)
      var i = 0
      while (i < level.sizes(current)) {
        val d = store.distance(query, ids(i))
        if (d < closest) { closest = d; next = ids(i) }
        i += 1
      }
      if (next >= 0) current = next else moved = false
    }
    current
  }

  /**
   * Lance's beam search (HNSW's search-layer) of `ef` nodes from `ep`: results ascending into
   * `outIds` / `outDists`; their count.
   */
  private def beam(level: HnswLevel, ep: Int, epDist: Float, ef: Int, query: Int): Int = {
    generation += 1
    stamp(ep) = generation
    candidates.clear(); results.clear()
    candidates.push(ep, epDist)
    results.push(ep, epDist)
    var stop = false
    while (!stop && !candidates.isEmpty) {
      val cur = candidates.topId
      val curDist = candidates.topDist
      candidates.pop()
      val furthest = if (results.isEmpty) Float.PositiveInfinity else results.topDist
      if (RustOrder.less(furthest, curDist) && results.size == ef) stop = true
      else {
        val ids = level.ids(cur)
        var i = 0
        while (i < level.sizes(cur)) {
          val nb = ids(i)
          if (stamp(nb) != generation) {
            stamp(nb) = generation
            val d = store.distance(query, nb)
            val far = if (results.isEmpty) Float.PositiveInfinity else results.topDist
            if (!RustOrder.less(far, d) || results.size < ef) {
              if (results.size < ef) results.push(nb, d)
              else if (RustOrder.less(d, results.topDist)) { results.pop(); results.push(nb, d) }
              candidates.push(nb, d)
            }
          }
          i += 1
        }
      }
    }
    ensure(results.size)
    results.drainSorted(outIds, outDists)
  }

  /**
   * Lance's neighbour selection of `k` among the `m` candidates in `bufIds` / `bufDists`
   * (reordered), into `outIds` / `outDists`; how many.
   */
  private def select(m: Int, k: Int): Int = {
    if (m <= k) {
      System.arraycopy(bufIds, 0, outIds, 0, m)
      System.arraycopy(bufDists, 0, outDists, 0, m)
      return m
    }
    RustOrder.sortUnstable(bufIds, bufDists, 0, m)
    var n = 0
    var pruned = 0
    var i = 0
    while (i < m && n < k) {
      val (c, cd) = (bufIds(i), bufDists(i))
      var prefers = true
      var j = 0
      while (prefers && j < n) {
        if (!RustOrder.less(cd, store.distance(c, outIds(j)))) prefers = false
        j += 1
      }
      if (n == 0 || prefers) { outIds(n) = c; outDists(n) = cd; n += 1 }
      else { prunedIds(pruned) = c; prunedDists(pruned) = cd; pruned += 1 }
      i += 1
    }
    i = 0
    while (i < pruned && n < k) {
      outIds(n) = prunedIds(i); outDists(n) = prunedDists(i); n += 1; i += 1
    }
    n
  }

  /** Adds the reverse of every edge of `level`; lists past their old degree are cut back. */
  private def addReciprocals(level: HnswLevel): Unit = {
    val n = level.len
    val counts = new Array[Int](n + 1)
    var node = 0
    while (node < n) {
      var i = 0
      while (i < level.sizes(node)) {
        val o = level.ids(node)(i)
        if (o < n && o != node) counts(o + 1) += 1
        i += 1
      }
      node += 1
    }
    var k = 0
    while (k < n) { counts(k + 1) += counts(k); k += 1 }
    val inIds = new Array[Int](counts(n))
    val inDists = new Array[Float](counts(n))
    val fill = java.util.Arrays.copyOf(counts, n)
    node = 0
    while (node < n) {
      var i = 0
      while (i < level.sizes(node)) {
        val o = level.ids(node)(i)
        if (o < n && o != node) {
          inIds(fill(o)) = node; inDists(fill(o)) = level.dists(node)(i); fill(o) += 1
        }
        i += 1
      }
      node += 1
    }
    node = 0
    while (node < n) {
      if (level.on(node)) {
        var i = counts(node)
        while (i < counts(node + 1)) {
          if (!level.linked(node, inIds(i))) level.add(node, inIds(i), inDists(i))
          i += 1
        }
        val limit = math.max(level.target(node), 1)
        val s = level.sizes(node)
        if (s > limit) {
          ensure(s)
          System.arraycopy(level.ids(node), 0, bufIds, 0, s)
          System.arraycopy(level.dists(node), 0, bufDists, 0, s)
          val c = select(s, limit)
          level.set(
            node,
            java.util.Arrays.copyOf(outIds, c),
            java.util.Arrays.copyOf(outDists, c),
            c
          )
        }
      }
      node += 1
    }
  }

  private def output(entry: Int): HnswGraph = {
    var rows = 0
    var edges = 0
    levels.foreach { lv =>
      rows += lv.orderSize
      var i = 0
      while (i < lv.orderSize) { edges += lv.sizes(lv.order(i)); i += 1 }
    }
    val levelOffsets = new Array[Int](levels.length + 1)
    val nodeIds = new Array[Int](rows)
    val edgeOffsets = new Array[Int](rows + 1)
    val edgeIds = new Array[Int](edges)
    val edgeDists = new Array[Float](edges)
    var r = 0
    var e = 0
    var l = 0
    while (l < levels.length) {
      val lv = levels(l)
      var i = 0
      while (i < lv.orderSize) {
        val node = lv.order(i)
        nodeIds(r) = node
        val s = lv.sizes(node)
        System.arraycopy(lv.ids(node), 0, edgeIds, e, s)
        System.arraycopy(lv.dists(node), 0, edgeDists, e, s)
        e += s
        r += 1
        edgeOffsets(r) = e
        i += 1
      }
      levelOffsets(l + 1) = r
      l += 1
    }
    HnswGraph(entry, levelOffsets, nodeIds, edgeOffsets, edgeIds, edgeDists)
  }
}
