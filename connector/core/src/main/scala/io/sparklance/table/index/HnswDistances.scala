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
 * Squared distances between scalar-quantized codes, as pylance 14's SQ storage measures them
 * (found against pylance 14.0.2): the sum of the squared differences of the u8 codes (an exact
 * integer, then a float) times `scale`, computed in f32 from the quantizer's bounds `start` and
 * `end` as the metric asks (see the companion).
 *
 * @param codes the codes, `dim` bytes a row
 */
private[index] final class SqL2Distances(codes: Array[Byte], dim: Int, scale: Float)
    extends HnswDistances {
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

private[index] object SqL2Distances {

  /** An "l2" index: `((end - start) as f32)² / 255²` in f32. */
  def l2(codes: Array[Byte], dim: Int, start: Double, end: Double): SqL2Distances = {
    val range = (end - start).toFloat
    new SqL2Distances(codes, dim, range * range / 65025f)
  }

  /**
   * A "cosine" index (codes of unit vectors): the squared L2 distance of the dequantized
   * vectors, `v · (k · k)` in f32 with `k = ((end - start) as f32) / 255` — not the l2 scale,
   * which is an ulp off for a third of the edges (every repaired edge's distance reproduced
   * bit for bit against pylance 14.0.2).
   */
  def cosine(codes: Array[Byte], dim: Int, start: Double, end: Double): SqL2Distances = {
    val k = (end - start).toFloat / 255f
    new SqL2Distances(codes, dim, k * k)
  }
}

/**
 * L2 distances between float vectors, as pylance 14's flat storage measures them (found against
 * pylance 14.0.2 on 8-, 12-, 16- and 24-dimensional vectors, where every stored distance is
 * reproduced bit for bit): squared differences in eight lanes, each lane summed over the
 * vector's chunks of eight with fused multiply-adds (`fma(d, d, lane)`: rounding each square
 * first is a bit off for a sixth of the edges from 16 dimensions on), the lanes then added
 * pairwise across halves (lane i with lane i + 4, then i with i + 2, then the two), after the
 * squared differences of a last partial chunk summed in order. pylance picks its kernel by the
 * CPU's SIMD support, so the last bit may differ on some machines.
 *
 * @param vectors the vectors, `dim` floats a row
 */
private[index] final class FlatL2Distances(vectors: Array[Float], dim: Int)
    extends HnswDistances {
  val size: Int = if (dim == 0) 0 else vectors.length / dim

  def distance(a: Int, b: Int): Float = FlatLanes.l2(vectors, a * dim, vectors, b * dim, dim)
}

/**
 * Dot distances between float vectors, as pylance 14's flat storage of a "dot" index measures
 * them while it repairs a graph (found against pylance 14.0.2 on 8- to 32-dimensional vectors,
 * every repaired edge's distance reproduced bit for bit): `1 - x·y`, `x·y` by Lance's dot
 * kernel ([[FlatLanes.dot]]).
 */
private[index] final class FlatDotDistances(vectors: Array[Float], dim: Int)
    extends HnswDistances {
  val size: Int = if (dim == 0) 0 else vectors.length / dim

  def distance(a: Int, b: Int): Float =
    1f - FlatLanes.dot(vectors, a * dim, vectors, b * dim, dim)
}

/**
 * Cosine distances between the unit vectors a "cosine" index stores, as pylance 14's flat
 * storage measures them while it repairs a graph (found against pylance 14.0.2 on 8- to
 * 32-dimensional vectors, every repaired edge's distance reproduced bit for bit): the vectors
 * are not taken as unit ones, `1 - x·y / |x| / |y|` divided in that order, `x·y` by Lance's
 * cosine kernel ([[FlatLanes.cosineDot]]), the norms the f32 square roots of `x·x` and `y·y`
 * by its dot kernel ([[FlatLanes.dot]]).
 */
private[index] final class FlatCosineDistances(vectors: Array[Float], dim: Int)
    extends HnswDistances {
  val size: Int = if (dim == 0) 0 else vectors.length / dim
  private val lanes = new Array[Float](16)
  private val norms = Array.tabulate(size) { r =>
    math.sqrt(FlatLanes.dot(vectors, r * dim, vectors, r * dim, dim).toDouble).toFloat
  }

  def distance(a: Int, b: Int): Float =
    1f - FlatLanes.cosineDot(vectors, a * dim, vectors, b * dim, dim, lanes) / norms(a) /
      norms(b)
}

/**
 * Distances between PQ codes, as pylance 14's PQ storage measures them while it repairs a
 * graph (found against pylance 14.0.2, every repaired edge's distance reproduced bit for bit:
 * L2 with sub-vectors of 2, 4 and 16 dimensions; dot with 2 sub-vectors of 4 and 16 dimensions
 * and 4 of 2; 4-bit codes with sub-vectors of 2 and 4). For each sub-vector in order, a term of
 * the two codes' centroids: their squared differences summed by Lance's L2 kernel
 * ([[FlatLanes.l2]]: in order below 8 dimensions) for the L2 and cosine metrics (a cosine
 * index's codes are of unit vectors), `1 - c·d` by its dot kernel ([[FlatLanes.dot]]) for the
 * dot metric (whose codes are of the vectors, not of residuals). The terms are added in order
 * from zero in f32 — with 4-bit codes, two sub-vectors' terms (one byte's) added first — and
 * for the dot metric `numSub - 1` is then subtracted.
 *
 * @param codes    the codes, a row after another (not transposed): a byte per sub-vector, or
 *                 with 4 bits two, the even sub-vector's in the low nibble
 * @param codebook `2^bits` centroids of `subDim` floats per sub-vector, sub-vector by
 *                 sub-vector
 */
private[index] final class PqDistances(
    codes: Array[Byte],
    numSub: Int,
    codebook: Array[Float],
    subDim: Int,
    bits: Int,
    dot: Boolean
) extends HnswDistances {
  private val rowBytes = if (bits == 4) numSub / 2 else numSub
  val size: Int = if (rowBytes == 0) 0 else codes.length / rowBytes

  private def term(m: Int, ca: Int, cb: Int): Float = {
    val x = ((m << bits) + ca) * subDim
    val y = ((m << bits) + cb) * subDim
    if (dot) 1f - FlatLanes.dot(codebook, x, codebook, y, subDim)
    else FlatLanes.l2(codebook, x, codebook, y, subDim)
  }

  def distance(a: Int, b: Int): Float = {
    var s = 0f
    var i = 0
    while (i < rowBytes) {
      val ca = codes(a * rowBytes + i) & 0xff
      val cb = codes(b * rowBytes + i) & 0xff
      if (bits == 4) s += term(2 * i, ca & 0xf, cb & 0xf) + term(2 * i + 1, ca >>> 4, cb >>> 4)
      else s += term(i, ca, cb)
      i += 1
    }
    if (dot) s - (numSub - 1).toFloat else s
  }
}

/**
 * Hamming distances between u8 vectors, as pylance 14's flat storage of a "hamming" index
 * measures them: the number of differing bits, an exact integer, as a float.
 */
private[index] final class FlatHammingDistances(vectors: Array[Byte], dim: Int)
    extends HnswDistances {
  val size: Int = if (dim == 0) 0 else vectors.length / dim

  def distance(a: Int, b: Int): Float = {
    var n = 0
    var i = 0
    while (i < dim) {
      n += Integer.bitCount((vectors(a * dim + i) ^ vectors(b * dim + i)) & 0xff)
      i += 1
    }
    n.toFloat
  }
}

/**
 * Dot distances between the SQ codes of a "dot" index, as pylance 14's SQ storage measures them
 * while it repairs a graph (found against pylance 14.0.2 on 8-, 12- and 16-dimensional
 * vectors, every repaired edge's distance reproduced bit for bit): the dot product of the
 * dequantized vectors `s + k·c` expanded over the codes and evaluated in f32,
 * `1 - (((dim · s) · s + (s · k) · (Σa + Σb)) + (k · k) · Σab)`, with `s = start as f32`,
 * `k = ((end - start) as f32) / 255` and the code sums exact integers.
 *
 * @param codes the codes, `dim` bytes a row
 */
private[index] final class SqDotDistances(codes: Array[Byte], dim: Int, start: Double, end: Double)
    extends HnswDistances {
  private val k: Float = (end - start).toFloat / 255f
  private val s: Float = start.toFloat
  private val constant: Float = dim.toFloat * s * s
  private val sk: Float = s * k
  private val kk: Float = k * k
  val size: Int = if (dim == 0) 0 else codes.length / dim
  private val sums = Array.tabulate(size) { r =>
    var t = 0
    var i = 0
    while (i < dim) { t += codes(r * dim + i) & 0xff; i += 1 }
    t
  }

  def distance(a: Int, b: Int): Float = {
    var dot = 0L
    var i = 0
    val (x, y) = (a * dim, b * dim)
    while (i < dim) {
      dot += (codes(x + i) & 0xff) * (codes(y + i) & 0xff)
      i += 1
    }
    1f - ((constant + sk * (sums(a) + sums(b)).toFloat) + kk * dot.toFloat)
  }
}
