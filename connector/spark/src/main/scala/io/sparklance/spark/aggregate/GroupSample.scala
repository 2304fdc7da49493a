package io.sparklance.spark.aggregate

/**
 * What the first rows of a task say about how far a grouping folds the whole task's rows:
 * the keys of `kept` sampled rows (those that passed the filter), `groups` of them distinct,
 * `once` seen exactly once and `twice` exactly twice.
 *
 * The keys of the task's other rows are unseen, so their number of distinct values is
 * estimated with Chao's bias-corrected estimator (many keys seen once and few seen twice mean
 * many keys not seen at all), and the task's groups as the expected number of distinct keys
 * among `taskRows` rows drawn from that many equally likely keys. Keys sorted or clustered
 * in the rows look fewer than they are (each shows its whole run in the sample, so few are
 * seen once): a task of them makes more groups than predicted, but each folds a run of rows,
 * where the push-down pays; a sorted unique key is still seen once per row.
 */
final case class GroupSample(kept: Long, groups: Long, once: Long, twice: Long) {
  require(
    groups <= kept && once + twice <= groups && once + 2 * twice <= kept,
    s"inconsistent sample: $this"
  )

  /** The estimated number of distinct keys the rows hold (Chao1, bias-corrected). */
  def distinctKeys: Double = groups + once.toDouble * (once - 1) / (2.0 * (twice + 1))

  /**
   * The expected share of groups per row in a task of `taskRows` rows: 1 when every row is its
   * own group, near 0 when few groups hold many rows. 0 when the sample kept no row (nothing
   * is known; a filter that keeps few rows leaves little to aggregate either way).
   */
  def groupShare(taskRows: Double): Double =
    if (kept == 0) 0.0
    else if (taskRows <= kept) groups.toDouble / kept
    else {
      val d = distinctKeys
      d * -math.expm1(-taskRows / d) / taskRows
    }
}

object GroupSample {

  /** The sample of rows whose keys occur `counts` times each (one count per distinct key). */
  def of(counts: Iterator[Long]): GroupSample = {
    var kept, groups, once, twice = 0L
    counts.foreach { c =>
      kept += c
      groups += 1
      if (c == 1) once += 1 else if (c == 2) twice += 1
    }
    GroupSample(kept, groups, once, twice)
  }
}
