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

  /**
   * Our index files equal pylance's (`kinds_files`: each file's columns, metadata, buffers and
   * rows), naming the first element that differs and its text from a little before the first
   * differing character.
   */
  protected def assertSameIndexFiles(ours: JsonNode, theirs: JsonNode): Unit =
    theirs.fieldNames().asScala.foreach { f =>
      Seq("columns", "meta", "buffers", "rows").foreach { k =>
        val (x, y) = (ours.path(f).path(k), theirs.path(f).path(k))
        if (x != y) {
          val at = (0 until math.max(x.size, y.size)).find(i => x.path(i) != y.path(i))
          val (xs, ys) =
            (at.map(x.path(_)).getOrElse(x).toString, at.map(y.path(_)).getOrElse(y).toString)
          val from = math.max(0, xs.zip(ys).takeWhile(p => p._1 == p._2).length - 60)
          fail(
            s"$f $k (sizes ${x.size}, ${y.size}) at $at, char $from: ours " +
              xs.slice(from, from + 300) + ", pylance's " + ys.slice(from, from + 300)
          )
        }
      }
    }
}
