package io.sparklance.table.maintenance

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import io.sparklance.table.txn.TwinDatasetSuite
import io.sparklance.testutil.Pylance

/**
 * Base of the compaction suites: our compaction against pylance's `optimize.compact_files`
 * with the same options, on twin datasets or on a byte-for-byte copy.
 */
abstract class CompactionTwinSuite extends TwinDatasetSuite {
  protected def ours(p: Path, opts: CompactionOptions = CompactionOptions()): CompactionMetrics =
    Compaction(fileIO, p.toString, opts)

  protected def theirs(p: Path, opts: Map[String, Any] = Map.empty): JsonNode =
    pylance("compact", p, opts.asJava)

  /** Our plan's metrics are pylance's. */
  protected def assertMetrics(m: CompactionMetrics, py: JsonNode): Unit = {
    assert(m.fragmentsRemoved == py.get("fragments_removed").asLong)
    assert(m.fragmentsAdded == py.get("fragments_added").asLong)
    assert(m.filesRemoved == py.get("files_removed").asLong)
    assert(m.filesAdded == py.get("files_added").asLong)
  }

  protected def compacted(o: Path, t: Path, opts: CompactionOptions, py: Map[String, Any]): Unit = {
    val m = ours(o, opts)
    assertMetrics(m, theirs(t, py))
    assertTwins(o, t)
  }

  /** Calls `fn(path, args...)` of the pylance helper module. */
  protected def call(fn: String, p: Path, args: Any*): JsonNode =
    Pylance.call(module, fn, (p.toString +: args): _*)
}
