package io.sparklance.table.index

/**
 * The distance between two stored vectors of an IVF partition (by their row in the partition's
 * storage), as an HNSW sub-index measures it while it builds or repairs its graph.
 */
private[index] trait HnswDistances {
  def size: Int
  def distance(a: Int, b: Int): Float
}

/**
 * L2 distances between scalar-quantized codes, as pylance 14's SQ storage measures them (found
 * against pylance 14.0.2): the sum of the squared differences of the u8 codes (an exact
 * integer, then a float), times `((end - start) as f32)² / 255²` computed in f32, `start` and
 * `end` being the quantizer's bounds.
 *
 * @param codes the codes, `dim` bytes a row
 */
private[index] final class SqL2Distances(codes: Array[Byte], dim: Int, start: Double,
    end: Double) extends HnswDistances {
  private val scale: Float = {
    val range = (end - start).toFloat
    range * range / 65025f
  }
  val size: Int = if (dim == 0) 0 else codes.length / dim

  def distance(a: Int, b: Int): Float = {
    var sum = 0
    var i = 0
    val (x, y) = (a * dim, b * dim)
    while (i < dim) {
      val d = (codes(x + i) & 0xff) - (codes(y + i) & 0xff)
      sum += d * d
      i += 1
    }
    sum.toFloat * scale
  }
}
