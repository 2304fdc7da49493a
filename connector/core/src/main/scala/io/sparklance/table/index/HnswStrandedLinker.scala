package io.sparklance.table.index

/**
 * Gives every level-0 node of a repaired HNSW graph an inbound path from the entry point, as
 * pylance 14's stranded-node linker does after a repair (found against pylance 14.0.2).
 * Stranded nodes are taken in id order, and again when a node they point to becomes
 * reachable; each is linked from an anchor: the end of a greedy walk (at most
 * `ef_construction` steps over reachable nodes) from its nearest reachable neighbour, else its
 * first reachable neighbour not yet an anchor, else the node linked last, else that nearest
 * neighbour. An anchor gets one more edge and drops none. Nodes with no reachable neighbour
 * are chained after the last node linked (or the entry point) at the end.
 */
private[index] final class HnswStrandedLinker(level: HnswLevel, store: HnswDistances) {
  private val n = level.len
  private val reachable = new Array[Boolean](n)
  private val queue = new Array[Int](n)

  def link(entry: Int, efConstruction: Int): Unit = {
    mark(entry, null)
    var strandedCount = 0
    var i = 0
    while (i < n) { if (!reachable(i)) strandedCount += 1; i += 1 }
    if (strandedCount == 0) return
    // waiting(x): the stranded nodes that point to the unreachable node x, in order.
    val waiting = new java.util.HashMap[Integer, java.util.ArrayList[Integer]]()
    val ready = new java.util.ArrayDeque[Integer]()
    i = 0
    while (i < n) {
      if (!reachable(i)) {
        ready.addLast(i)
        var e = 0
        while (e < level.sizes(i)) {
          val nb = level.ids(i)(e)
          if (!reachable(nb)) {
            var w = waiting.get(nb)
            if (w == null) { w = new java.util.ArrayList[Integer](); waiting.put(nb, w) }
            w.add(i)
          }
          e += 1
        }
      }
      i += 1
    }
    val anchored = new Array[Boolean](n)
    var tail = -1
    val isolated = new java.util.ArrayList[Integer]()
    val newly = new java.util.ArrayList[Integer]()
    val candIds = new Array[Int](math.max(1, level.ids.map(_.length).max))
    val candDists = new Array[Float](candIds.length)
    while (!ready.isEmpty) {
      val node: Int = ready.pollFirst()
      if (!reachable(node)) {
        var m = 0
        var nearest = -1
        var nearestDist = 0f
        var e = 0
        while (e < level.sizes(node)) {
          val nb = level.ids(node)(e)
          if (reachable(nb)) {
            val d = level.dists(node)(e)
            candIds(m) = nb; candDists(m) = d; m += 1
            if (nearest < 0 || RustOrder.less(d, nearestDist)) { nearest = nb; nearestDist = d }
          }
          e += 1
        }
        if (nearest < 0) isolated.add(node)
        else {
          var closest = nearest
          var closestDist = nearestDist
          var step = 0
          var walking = true
          while (walking && step < efConstruction) {
            var best = -1
            var bestDist = 0f
            var k = 0
            while (k < level.sizes(closest)) {
              val nb = level.ids(closest)(k)
              if (reachable(nb)) {
                val d = store.distance(node, nb)
                if (best < 0 || RustOrder.less(d, bestDist)) { best = nb; bestDist = d }
              }
              k += 1
            }
            if (best >= 0 && RustOrder.less(bestDist, closestDist)) {
              closest = best; closestDist = bestDist
            } else walking = false
            step += 1
          }
          RustOrder.sortUnstable(candIds, candDists, 0, m)
          var anchor = -1
          var anchorDist = 0f
          if (!anchored(closest)) { anchor = closest; anchorDist = closestDist }
          var c = 0
          while (anchor < 0 && c < m) {
            if (!anchored(candIds(c))) { anchor = candIds(c); anchorDist = candDists(c) }
            c += 1
          }
          if (anchor < 0 && tail >= 0) { anchor = tail; anchorDist = store.distance(node, tail) }
          if (anchor < 0) { anchor = nearest; anchorDist = nearestDist }
          level.add(anchor, node, anchorDist)
          anchored(anchor) = true
          tail = node
          newly.clear()
          mark(node, newly)
          var r = 0
          while (r < newly.size) {
            val w = waiting.remove(newly.get(r))
            if (w != null) ready.addAll(w)
            r += 1
          }
        }
      }
    }
    var k = 0
    while (k < isolated.size) {
      val node: Int = isolated.get(k)
      if (!reachable(node)) {
        val anchor = if (tail >= 0) tail else entry
        level.add(anchor, node, store.distance(anchor, node))
        anchored(anchor) = true
        tail = node
        mark(node, null)
      }
      k += 1
    }
  }

  /** Marks what `start` reaches (breadth first); the newly reached into `newly` if given. */
  private def mark(start: Int, newly: java.util.ArrayList[Integer]): Unit = {
    if (start < 0 || start >= n || reachable(start)) return
    var head = 0
    var tailPos = 0
    reachable(start) = true
    queue(tailPos) = start; tailPos += 1
    while (head < tailPos) {
      val cur = queue(head); head += 1
      if (newly != null) newly.add(cur)
      var e = 0
      while (e < level.sizes(cur)) {
        val nb = level.ids(cur)(e)
        if (!reachable(nb)) { reachable(nb) = true; queue(tailPos) = nb; tailPos += 1 }
        e += 1
      }
    }
  }
}
