package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import org.slf4j.LoggerFactory

import io.sparklance.format._
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{CompareOp, FilterDomain, FilterValue, ManifestFile, RowFilter,
  RowFilterEvaluator, Snapshot}
import io.sparklance.table.RowFilter._
import io.sparklance.table.txn.Rewrite

/**
 * Which fragments of a version can hold rows matching a pushed filter, from the BTREE indices
 * pylance (or this connector) built: fragments an index covers are kept only when the index
 * holds a matching value in them; fragments it does not cover are always kept. The scan still
 * evaluates the filter on every row it reads, so pruning never changes a result: it only
 * skips fragments that cannot match (as pylance's ScalarIndexQuery does before its refine).
 *
 * A BTREE index (see [[BTreeIndexWriter]]) is searched as pylance searches it: its lookup file
 * (first and last value and null count of each page of the sorted data file) picks the pages
 * whose value range meets the predicate, and those pages' values are tested exactly; their
 * row addresses name the fragments. Leaves used: comparisons but `!=`, IN, IS NULL, on integer,
 * date, timestamp and string columns; AND intersects, OR unites; anything else prunes nothing.
 * A predicate that would read more than a quarter of an index's pages is not looked up (it
 * cannot prune much). An index whose files do not read is skipped with a warning.
 */
object IndexPruning {
  private val log = LoggerFactory.getLogger(getClass)
  private val MaxPageShare = 4

  /**
   * The fragment ids of `s` that may hold rows matching `filter`, or None when no index says
   * anything about it.
   */
  def candidates(io: FileIO, s: Snapshot, filter: RowFilter): Option[Set[Long]] = {
    val indices = ManifestFile.indices(io, s).filter(usable(s, _))
    if (indices.isEmpty) None
    else new Search(io, s, indices).visit(filter)
  }

  private def usable(s: Snapshot, i: TableProtos.IndexMetadata): Boolean =
    BTreeIndexRemap.remappable(i) && s.schema.fields.exists(f => f.id == i.getFields(0) &&
      FilterDomain.of(f).exists(d => !d.isInstanceOf[FilterDomain.Floating]) &&
      f.children.isEmpty)

  private final class Search(io: FileIO, s: Snapshot, indices: Seq[TableProtos.IndexMetadata]) {
    private val present: Set[Long] = s.fragments.map(_.getId).toSet
    private val byColumn: Map[String, TableProtos.IndexMetadata] = indices.flatMap { i =>
      s.schema.fields.find(_.id == i.getFields(0)).map(_.name -> i)
    }.toMap

    def visit(f: RowFilter): Option[Set[Long]] = f match {
      case And(l, r) => (visit(l), visit(r)) match {
        case (Some(a), Some(b)) => Some(a.intersect(b))
        case (a, b) => a.orElse(b)
      }
      case Or(l, r) => for (a <- visit(l); b <- visit(r)) yield a.union(b)
      case Const(false) => Some(Set.empty)
      case c: Compare if c.op != CompareOp.NotEq => leaf(c.column, c)
      case in: In if !in.negated => leaf(in.column, in)
      case n: IsNull if !n.negated => leaf(n.column, n)
      case _ => None
    }

    private def leaf(column: String, f: RowFilter): Option[Set[Long]] =
      byColumn.get(column).flatMap { i =>
        val covered = Rewrite.bitmap(i)
        try lookup(i, column, f).map { hits =>
          present.filter(id => !covered.contains(id.toInt) || hits(id))
        } catch {
          case e: Exception =>
            log.warn(s"Index ${i.getName} of ${s.root} was not used to prune fragments: " +
              e.getMessage)
            None
        }
      }

    /** The fragment ids the index holds a row matching `f` in (None: too many pages). */
    private def lookup(i: TableProtos.IndexMetadata, column: String, f: RowFilter)
        : Option[Set[Long]] = {
      val dir = Paths.join(Paths.join(s.root, "_indices"), ManifestFile.uuidText(i.getUuid))
      val lookupFile = IndexFileLayout.read(io, Paths.join(dir, BTreeIndexWriter.LookupFile))
      lookupFile.expect("min", "max", "null_count", "page_idx")
      if (!lookupFile.metadata.get("range_partitioned").forall(_ == "false")) return None
      val batch = lookupFile.metadata.get("batch_size").map(_.toLong).getOrElse(
        throw new IllegalStateException("its page lookup has no batch_size"))
      val (pages, total) = matchingPages(lookupFile, f)
      if (pages.length > 2 && pages.length * MaxPageShare > total) return None
      val dataPath = Paths.join(dir, BTreeIndexWriter.DataFile)
      val data = IndexFileLayout.read(io, dataPath)
      data.expect("values", "ids")
      val values = data.fields.head
      val test = new RowFilterEvaluator(rename(f, "values"), Map("values" -> values))
      val reader = data.reader(io)
      val hits = scala.collection.mutable.HashSet.empty[Long]
      try {
        pages.foreach { p =>
          val start = p * batch
          val end = math.min(start + batch, reader.numRows)
          if (start < end) {
            val cols = reader.scan(data.fields, start, end).next((end - start).toInt)
            val (v, ids) = (cols(0), cols(1))
            val ok = test.evaluate(_ => v, v.length)
            val bb = ByteBuffer.wrap(ids.asInstanceOf[FixedWidthArray].data)
              .order(ByteOrder.LITTLE_ENDIAN)
            var r = 0
            while (r < ok.length) {
              if (ok(r)) hits += bb.getLong(r * 8) >>> 32
              r += 1
            }
          }
        }
      } finally reader.close()
      Some(hits.toSet)
    }

    /** The pages (`page_idx`) whose value range can hold a row matching `f`, and how many. */
    private def matchingPages(layout: IndexFileLayout, f: RowFilter): (Array[Long], Int) = {
      val reader = layout.reader(io)
      try {
        val n = reader.numRows.toInt
        val cols = reader.scan(layout.fields, 0, n).next(n)
        val byName = Map("min" -> cols(0), "max" -> cols(1), "null_count" -> cols(2))
        val idx = cols(3)
        val fields = layout.fields.map(x => x.name -> x).toMap
        val ok = new RowFilterEvaluator(pageTest(f), fields).evaluate(byName, n)
        val ids = ByteBuffer.wrap(idx.asInstanceOf[FixedWidthArray].data)
          .order(ByteOrder.LITTLE_ENDIAN)
        (ok.indices.filter(ok).map(r => ids.getInt(r * 4) & 0xffffffffL).toArray, n)
      } finally reader.close()
    }
  }

  /**
   * Whether a page (its first value `min`, last value `max`: nulls sort first, so `min` may
   * be null and an all-null page has a null `max`) can hold a row matching the leaf `f`:
   * a filter over the lookup file's `min`, `max` and `null_count`.
   */
  private def pageTest(f: RowFilter): RowFilter = f match {
    case Compare(_, op, v) =>
      val lowOk = (o: CompareOp) => Or(IsNull("min", negated = false), Compare("min", o, v))
      op match {
        case CompareOp.Eq => And(lowOk(CompareOp.LtEq), Compare("max", CompareOp.GtEq, v))
        case CompareOp.Lt | CompareOp.LtEq =>
          And(lowOk(op), IsNull("max", negated = true))
        case CompareOp.Gt | CompareOp.GtEq => Compare("max", op, v)
        case CompareOp.NotEq => Const(true)
      }
    case In(_, values, _) =>
      values.map(v => pageTest(Compare("min", CompareOp.Eq, v))).reduceOption(Or(_, _))
        .getOrElse(Const(false))
    case IsNull(_, _) => Compare("null_count", CompareOp.Gt, FilterValue.LongValue(0))
    case other => throw new IllegalArgumentException(s"not an index leaf: $other")
  }

  /** The leaf `f` over the column `to` instead of its own. */
  private def rename(f: RowFilter, to: String): RowFilter = f match {
    case c: Compare => c.copy(column = to)
    case in: In => in.copy(column = to)
    case n: IsNull => n.copy(column = to)
    case other => other
  }
}
