package io.sparklance.table.vector

import io.sparklance.LanceErrors

/**
 * A distance as pylance 14 names and computes it (found against pylance 14.0.2): `l2` the
 * squared Euclidean distance, `cosine` 1 - the cosine similarity, `dot` 1 - the dot product.
 * Smaller is nearer for all three. Sums run in double and are rounded once to float, so a
 * distance differs from pylance's (float, vectorised) by a few ulps at most.
 */
sealed abstract class VectorMetric(val name: String) extends Serializable {

  /** The distance between `q` and the `dim` values of `v` from `offset`; NaN when undefined. */
  def distance(q: Array[Float], v: Array[Float], offset: Int, dim: Int): Float

  override def toString: String = name
}

object VectorMetric {
  case object L2 extends VectorMetric("l2") {
    def distance(q: Array[Float], v: Array[Float], offset: Int, dim: Int): Float = {
      var s = 0.0
      var i = 0
      while (i < dim) {
        val d = v(offset + i).toDouble - q(i)
        s += d * d
        i += 1
      }
      s.toFloat
    }
  }

  case object Cosine extends VectorMetric("cosine") {
    def distance(q: Array[Float], v: Array[Float], offset: Int, dim: Int): Float = {
      var dot = 0.0
      var nq = 0.0
      var nv = 0.0
      var i = 0
      while (i < dim) {
        val a = v(offset + i).toDouble
        val b = q(i).toDouble
        dot += a * b
        nq += b * b
        nv += a * a
        i += 1
      }
      if (nq == 0 || nv == 0) Float.NaN else (1.0 - dot / (math.sqrt(nq) * math.sqrt(nv))).toFloat
    }
  }

  case object Dot extends VectorMetric("dot") {
    def distance(q: Array[Float], v: Array[Float], offset: Int, dim: Int): Float = {
      var s = 0.0
      var i = 0
      while (i < dim) {
        s += v(offset + i).toDouble * q(i)
        i += 1
      }
      (1.0 - s).toFloat
    }
  }

  val All: Seq[VectorMetric] = Seq(L2, Cosine, Dot)

  /** The metric named `name` (any case; `euclidean` is `l2` as in pylance). */
  def parse(name: String): VectorMetric = name.toLowerCase(java.util.Locale.ROOT) match {
    case "l2" | "euclidean" => L2
    case "cosine" => Cosine
    case "dot" => Dot
    case _ => throw LanceErrors.invalidOption(
        "metric",
        name,
        s"must be one of ${All.map(_.name).mkString(", ")}"
      )
  }

  /** `q` scaled to unit length, as Lance normalises a query for a cosine index. */
  def normalized(q: Array[Float]): Array[Float] = {
    var s = 0.0
    q.foreach(x => s += x.toDouble * x)
    val n = math.sqrt(s)
    if (n == 0) q.clone() else q.map(x => (x / n).toFloat)
  }
}
