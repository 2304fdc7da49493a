package io.sparklance.table.maintenance

/** pylance's `CompactionMetrics`, plus the fragments left alone because indices cover them. */
final case class CompactionMetrics(
    fragmentsRemoved: Long,
    fragmentsAdded: Long,
    filesRemoved: Long,
    filesAdded: Long,
    indexedFragmentsSkipped: Long = 0L
)
