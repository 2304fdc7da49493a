package io.sparklance.table.maintenance

import io.sparklance.table.Snapshot

/** What a compaction of the version `snapshot` rewrites, and what it leaves for indices. */
final case class CompactionPlan(
    snapshot: Snapshot,
    groups: Seq[CompactionGroup],
    indexedFragmentsSkipped: Long
)
