package io.sparklance.table.vector

/**
 * The `k` smallest (distance, row id) pairs offered, ordered by distance then row id as
 * pylance sorts search results: a bounded max-heap on two primitive arrays.
 */
final class TopK(val k: Int) extends Serializable {
  require(k > 0, s"k must be positive, not $k")
  private val dist = new Array[Float](k)
  private val ids = new Array[Long](k)
  private var size = 0

  def length: Int = size

  /** Whether (a, ia) sorts after (b, ib). */
  @inline private def after(a: Float, ia: Long, b: Float, ib: Long): Boolean = {
    val c = java.lang.Float.compare(a, b)
    c > 0 || (c == 0 && ia > ib)
  }

  def offer(d: Float, id: Long): Unit = {
    if (size < k) {
      var i = size
      size += 1
      while (i > 0 && after(d, id, dist((i - 1) / 2), ids((i - 1) / 2))) {
        val p = (i - 1) / 2
        dist(i) = dist(p); ids(i) = ids(p); i = p
      }
      dist(i) = d; ids(i) = id
    } else if (after(dist(0), ids(0), d, id)) {
      var i = 0
      var done = false
      while (!done) {
        val l = 2 * i + 1
        if (l >= size) done = true
        else {
          val r = l + 1
          val big = if (r < size && after(dist(r), ids(r), dist(l), ids(l))) r else l
          if (after(dist(big), ids(big), d, id)) {
            dist(i) = dist(big); ids(i) = ids(big); i = big
          } else done = true
        }
      }
      dist(i) = d; ids(i) = id
    }
  }

  def addAll(other: TopK): Unit = other.result.foreach { case (d, id) => offer(d, id) }

  /** The pairs kept, nearest first. */
  def result: Array[(Float, Long)] = {
    val out = Array.tabulate(size)(i => (dist(i), ids(i)))
    out.sortWith((a, b) => after(b._1, b._2, a._1, a._2))
  }
}
