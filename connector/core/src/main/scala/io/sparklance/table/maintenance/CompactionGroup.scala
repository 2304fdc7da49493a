package io.sparklance.table.maintenance

import scala.collection.mutable
import scala.jdk.CollectionConverters._

import io.sparklance.proto.TableProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.{FeatureFlags, FragmentRef, RowCounts, Snapshot}
import io.sparklance.table.index.IndexRemap
import io.sparklance.table.txn.Rewrite

/** One group of adjacent fragments to rewrite together: a compaction task. */
final case class CompactionGroup(fragments: Seq[TableProtos.DataFragment])
