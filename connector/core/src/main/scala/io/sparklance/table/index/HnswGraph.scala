package io.sparklance.table.index

/**
 * One IVF partition's HNSW graph as `index.idx` stores it: a row per node and level, levels
 * one after another (`levelOffsets(l)` until `levelOffsets(l + 1)` are level l's rows; level 0
 * has every node), each row a node id (its row in the partition's storage), its neighbours and
 * their distances (rows' edges at `edgeOffsets(r)` until `edgeOffsets(r + 1)`); search starts
 * at `entryPoint`.
 */
private[index] final case class HnswGraph(
    entryPoint: Int,
    levelOffsets: Array[Int],
    nodeIds: Array[Int],
    edgeOffsets: Array[Int],
    edgeIds: Array[Int],
    edgeDists: Array[Float]
) {
  def numRows: Int = nodeIds.length
  def numLevels: Int = levelOffsets.length - 1

  /** The number of nodes (level 0's rows). */
  def numNodes: Int = if (levelOffsets.length < 2) 0 else levelOffsets(1) - levelOffsets(0)
}

/** One level of a graph under repair: each node's edges in growable primitive arrays. */
private[index] final class HnswLevel(n: Int) {
  val ids: Array[Array[Int]] = Array.fill(n)(HnswLevel.NoIds)
  val dists: Array[Array[Float]] = Array.fill(n)(HnswLevel.NoDists)
  val sizes = new Array[Int](n)

  /** The degree a node had before the deletions (the most it may keep). */
  val target = new Array[Int](n)
  val on = new Array[Boolean](n)

  /** The level's nodes in their row order. */
  var order = new Array[Int](16)
  var orderSize = 0

  /** Nodes that lost an edge. */
  var damaged = new Array[Int](16)
  var damagedSize = 0

  def len: Int = n

  def add(node: Int, id: Int, d: Float): Unit = {
    val s = sizes(node)
    if (s == ids(node).length) {
      val cap = math.max(8, s * 2)
      ids(node) = java.util.Arrays.copyOf(ids(node), cap)
      dists(node) = java.util.Arrays.copyOf(dists(node), cap)
    }
    ids(node)(s) = id
    dists(node)(s) = d
    sizes(node) = s + 1
  }

  def set(node: Int, newIds: Array[Int], newDists: Array[Float], size: Int): Unit = {
    ids(node) = newIds; dists(node) = newDists; sizes(node) = size
  }

  def linked(node: Int, id: Int): Boolean = {
    val a = ids(node)
    var i = 0
    val s = sizes(node)
    while (i < s) { if (a(i) == id) return true; i += 1 }
    false
  }

  def addOrdered(node: Int): Unit = {
    if (orderSize == order.length) order = java.util.Arrays.copyOf(order, orderSize * 2)
    order(orderSize) = node; orderSize += 1
  }

  def addDamaged(node: Int): Unit = {
    if (damagedSize == damaged.length) damaged = java.util.Arrays.copyOf(damaged, damagedSize * 2)
    damaged(damagedSize) = node; damagedSize += 1
  }
}

private[index] object HnswLevel {
  val NoIds = new Array[Int](0)
  val NoDists = new Array[Float](0)
}
