package io.sparklance.table.vector

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, FixedSizeListArray, FixedWidthArray}

/**
 * How an IVF index keeps a partition's vectors, and the distance it gives a row: what
 * pylance 14 returns as `_distance` from the index when no refine step recomputes it (found
 * against pylance 14.0.2). `metric` is the one codes are compared by: for SQ and PQ the
 * index's inner metric, l2 for an l2 or cosine index (a cosine SQ or PQ index compares unit
 * vectors by l2, so its distances are squared l2 between unit vectors, twice 1 - cosine),
 * dot for a dot index; for IVF_FLAT the index's own (a cosine IVF_FLAT gives 1 - cosine).
 */
sealed abstract class IvfQuantizer extends Serializable {
  def dim: Int
  def metric: VectorMetric

  /**
   * The distances of the `n` rows of `codes` (a partition's `flat`, `__sq_code` or
   * `__pq_code` column) to the prepared query `q`, written to `out`; `centroid` is the
   * partition's.
   */
  def score(
      q: Array[Float],
      centroid: Array[Float],
      codes: ColumnArray,
      n: Int,
      out: Array[Float]
  ): Unit

  protected def child(codes: ColumnArray, width: Int, what: String): FixedWidthArray =
    codes match {
      case f: FixedSizeListArray => f.child match {
          case c: FixedWidthArray if c.byteWidth == width => c
          case _ => throw LanceErrors.unsupported(s"IVF index $what of ${width}-byte items only")
        }
      case _ => throw LanceErrors.unsupported(s"IVF index $what: not a fixed-size list")
    }
}

object IvfQuantizer {

  /**
   * IVF_FLAT: the vectors themselves (unit vectors for a cosine index), compared exactly by
   * the index's metric.
   */
  final case class Flat(dim: Int, metric: VectorMetric) extends IvfQuantizer {
    def score(
        q: Array[Float],
        centroid: Array[Float],
        codes: ColumnArray,
        n: Int,
        out: Array[Float]
    ): Unit = {
      val c = child(codes, 4, "flat vectors")
      val v = new Array[Float](n * dim)
      ByteBuffer.wrap(c.data, 0, n * dim * 4).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v)
      var i = 0
      while (i < n) { out(i) = metric.distance(q, v, i * dim, dim); i += 1 }
    }
  }

  /**
   * IVF_SQ, 8 bits: each value `x` kept as the byte `(x - start) * 255 / (end - start)`
   * (truncated, saturating). l2: the query quantized the same way, the squared difference
   * of the bytes summed and scaled by `(end - start)^2 / 255^2`. dot: 1 - the dot product of
   * the query (not quantized) with the dequantized row `start + byte * (end - start) / 255`.
   */
  final case class Sq(dim: Int, metric: VectorMetric, start: Double, end: Double)
      extends IvfQuantizer {
    def score(
        q: Array[Float],
        centroid: Array[Float],
        codes: ColumnArray,
        n: Int,
        out: Array[Float]
    ): Unit = {
      val b = child(codes, 1, "SQ codes").data
      val range = end - start
      if (metric == VectorMetric.Dot) {
        val step = range / 255.0
        var i = 0
        while (i < n) {
          var s = 0.0
          var j = 0
          while (j < dim) {
            s += q(j) * (start + (b(i * dim + j) & 0xff) * step)
            j += 1
          }
          out(i) = (1.0 - s).toFloat
          i += 1
        }
      } else {
        val qc = new Array[Int](dim)
        var j = 0
        while (j < dim) {
          qc(j) = if (range == 0) 0
          else {
            val v = (q(j).toDouble - start) * 255.0 / range
            if (v.isNaN || v <= 0) 0 else if (v >= 255) 255 else v.toInt
          }
          j += 1
        }
        val r = range.toFloat
        val scale = r * r
        var i = 0
        while (i < n) {
          var s = 0L
          j = 0
          while (j < dim) {
            val d = (b(i * dim + j) & 0xff) - qc(j)
            s += d * d
            j += 1
          }
          out(i) = s.toFloat * scale / 65025.0f
          i += 1
        }
      }
    }
  }

  /**
   * IVF_PQ, 8 bits, `m` sub-vectors: a distance table from each query sub-vector to its 256
   * codewords (l2: squared distance; dot: 1 - dot product), a row's distance the sum of its
   * codes' entries (float, sub-vector by sub-vector), minus `m - 1` for dot. An l2 or cosine
   * index codes residuals (vector - centroid), so the query's residual to the partition's
   * centroid is looked up; a dot index codes the vectors. Codes are transposed per partition
   * (byte j of every row, then byte j + 1) when `transposed`.
   */
  final case class Pq(
      dim: Int,
      metric: VectorMetric,
      m: Int,
      codebook: Array[Float],
      transposed: Boolean
  ) extends IvfQuantizer {
    def score(
        q: Array[Float],
        centroid: Array[Float],
        codes: ColumnArray,
        n: Int,
        out: Array[Float]
    ): Unit = {
      val b = child(codes, 1, "PQ codes").data
      val sub = dim / m
      val key = if (metric == VectorMetric.Dot) q
      else {
        val r = new Array[Float](dim)
        var j = 0
        while (j < dim) { r(j) = q(j) - centroid(j); j += 1 }
        r
      }
      val table = new Array[Float](m * 256)
      val subQuery = new Array[Float](sub)
      var s = 0
      while (s < m) {
        System.arraycopy(key, s * sub, subQuery, 0, sub)
        var c = 0
        while (c < 256) {
          table(s * 256 + c) = metric.distance(subQuery, codebook, (s * 256 + c) * sub, sub)
          c += 1
        }
        s += 1
      }
      java.util.Arrays.fill(out, 0, n, 0f)
      s = 0
      while (s < m) {
        var i = 0
        while (i < n) {
          val code = if (transposed) b(s * n + i) else b(i * m + s)
          out(i) += table(s * 256 + (code & 0xff))
          i += 1
        }
        s += 1
      }
      if (metric == VectorMetric.Dot) {
        var i = 0
        while (i < n) { out(i) -= (m - 1).toFloat; i += 1 }
      }
    }
  }
}
