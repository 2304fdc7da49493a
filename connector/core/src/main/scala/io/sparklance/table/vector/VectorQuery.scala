package io.sparklance.table.vector

import io.sparklance.LanceErrors

/**
 * A nearest-neighbour query as pylance 14 names its parameters:
 * `to_table(nearest={"column", "q", "k", "metric", "nprobes", "refine_factor"})`.
 *
 * @param metric the distance asked for; None: the index's
 * @param nprobes partitions probed; None: all of them (pylance's default is an adaptive
 *                budget, not reproduced)
 * @param refineFactor re-rank `k * refineFactor` index candidates by exact distance
 */
final case class VectorQuery(
    column: String,
    q: Array[Float],
    k: Int,
    metric: Option[VectorMetric] = None,
    nprobes: Option[Int] = None,
    refineFactor: Option[Int] = None
) {
  if (k <= 0) throw LanceErrors.invalidOption("k", k.toString, "must be positive")
  nprobes.foreach(n =>
    if (n <= 0)
      throw LanceErrors.invalidOption("nprobes", n.toString, "must be positive")
  )
  refineFactor.foreach(r =>
    if (r <= 0)
      throw LanceErrors.invalidOption("refine_factor", r.toString, "must be positive")
  )

  /** Candidates kept from the index: `k * refine_factor`. */
  def candidates: Int = k * refineFactor.getOrElse(1)
}
