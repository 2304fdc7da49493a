package io.sparklance.table.maintenance

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import io.sparklance.proto.TableProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.{FeatureFlags, FragmentRef, RowCounts, Snapshot}
import io.sparklance.table.index.IndexRemap
import io.sparklance.table.txn.Rewrite

/** What a compaction of the version `snapshot` rewrites, and what it leaves for indices. */
final case class CompactionPlan(
    snapshot: Snapshot,
    groups: Seq[CompactionGroup],
    indexedFragmentsSkipped: Long
)
