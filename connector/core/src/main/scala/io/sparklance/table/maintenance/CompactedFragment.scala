package io.sparklance.table.maintenance

import io.sparklance.table.commit.NewFragment

/**
 * One new fragment a compaction task wrote, and with stable row ids the lineage of its rows
 * (row ids, created-at and last-updated-at versions), carried from the old fragments.
 */
final case class CompactedFragment(
    fragment: NewFragment,
    rowIds: Array[Long],
    createdAt: Array[Long],
    updatedAt: Array[Long]
)
