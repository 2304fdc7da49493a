package io.sparklance.table.maintenance

import scala.concurrent.duration._

/**
 * Which versions `cleanup_old_versions` removes, as pylance 14 takes its arguments: versions
 * older than `olderThan` and not among the last `retainVersions` (two weeks when neither is
 * given); the latest and tagged versions are always kept.
 */
final case class CleanupPolicy(
    olderThan: Option[FiniteDuration] = None,
    retainVersions: Option[Int] = None,
    deleteUnverified: Boolean = false,
    errorIfTaggedOldVersions: Boolean = true
) {
  retainVersions.foreach(n => require(n > 0, s"retain_versions must be positive, not $n"))
}
