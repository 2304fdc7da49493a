package io.sparklance.table.maintenance

import io.sparklance.proto.TableProtos

/** One group of adjacent fragments to rewrite together: a compaction task. */
final case class CompactionGroup(fragments: Seq[TableProtos.DataFragment])
