package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap
import org.slf4j.LoggerFactory

import io.sparklance.format._
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{
  CompareOp,
  DatasetLayout,
  FeatureFlags,
  FilterDomain,
  FilterValue,
  LiveRows,
  ManifestFile,
  RowFilter,
  RowFilterEvaluator,
  Snapshot
}
import io.sparklance.table.RowFilter._
import io.sparklance.table.txn.Rewrite

/**
 * Which rows of a version can match a pushed filter, from the BTREE indices pylance (or this
 * connector) built: in a fragment an index covers, only the rows the index holds a matching
 * value for; fragments it does not cover, wholly. The scan still evaluates the filter on every
 * row it reads, so pruning never changes a result: it only skips fragments, splits and
 * batches that cannot match (as pylance's ScalarIndexQuery does before its refine).
 *
 * A BTREE index (see [[BTreeIndexWriter]]) is searched as pylance searches it: its lookup file
 * (first and last value and null count of each page of the sorted data file) picks the pages
 * whose value range meets the predicate, and those pages' values are tested exactly; their
 * row addresses name the rows. A BITMAP index (tables without stable row ids) gives the rows
 * of its values matching the predicate; a ZONEMAP index, the row spans of its zones whose
 * value range meets it. Leaves used: comparisons but `!=`, IN, IS NULL, on integer,
 * date, timestamp and string columns; AND intersects, OR unites; anything else prunes nothing.
 * A predicate that would read more than a quarter of an index's pages is not looked up (it
 * cannot prune much). An index whose files do not read is skipped with a warning.
 */
object IndexPruning {
  private val log = LoggerFactory.getLogger(getClass)
  private val MaxPageShare = 4

  /**
   * Fragment id -> the row offsets that may match (None: any row may), for every fragment of
   * the version that may hold a match; None when no index says anything about `filter`.
   */
  type Candidates = Map[Long, Option[RoaringBitmap]]

  /** The rows of `s` that may match `filter` (see [[Candidates]]). */
  def candidates(io: FileIO, s: Snapshot, filter: RowFilter): Option[Candidates] = {
    val indices = ManifestFile.indices(io, s).filter(usable(s, _))
    if (indices.isEmpty) None
    else new Search(io, s, indices).visit(filter)
  }

  /** The rows both `a` and `b` allow (a fragment absent from either, or left with none, goes). */
  def and(a: Candidates, b: Candidates): Candidates =
    a.keySet.intersect(b.keySet).iterator.flatMap { id =>
      (a(id), b(id)) match {
        case (None, y) => Some(id -> y)
        case (x, None) => Some(id -> x)
        case (Some(x), Some(y)) =>
          val both = RoaringBitmap.and(x, y)
          if (both.isEmpty) None else Some(id -> Some(both))
      }
    }.toMap

  private def or(a: Candidates, b: Candidates): Candidates = LiveRows.unionBy(a, b)(orRows)

  /** The rows of one fragment either of two candidates holds (None: every row). */
  private def orRows(x: Option[RoaringBitmap], y: Option[RoaringBitmap]): Option[RoaringBitmap] =
    for (a <- x; b <- y) yield RoaringBitmap.or(a, b)

  /**
   * A BTREE index, or a BITMAP index of a table without stable row ids (with them, its
   * bitmaps hold row ids, not addresses), on a top-level column whose values compare exactly.
   */
  private def usable(s: Snapshot, i: TableProtos.IndexMetadata): Boolean =
    (BTreeIndexRemap.remappable(i) || isZoneMap(i) || isBitmap(i) &&
      (s.readerFeatureFlags & FeatureFlags.StableRowIds) == 0) &&
      s.schema.fields.exists(f =>
        f.id == i.getFields(0) && f.children.isEmpty &&
          FilterDomain.of(f).exists {
            case _: FilterDomain.Floating | FilterDomain.Decimal128 => false
            case _ => true
          }
      )

  private val ZoneMapType = "/lance.table.ZoneMapIndexDetails"
  private val ZoneMapFile = "zonemap.lance"

  private def isZoneMap(i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == ZoneMapType && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty &&
      i.getFilesList.asScala.map(_.getPath).toSet == Set(ZoneMapFile)

  /** Which index of a column is used: BTREE first, then BITMAP, then ZONEMAP. */
  private def rank(i: TableProtos.IndexMetadata): Int =
    if (isZoneMap(i)) 2 else if (isBitmap(i)) 1 else 0

  private def isBitmap(i: TableProtos.IndexMetadata): Boolean =
    BitmapIndexRemap.remappable(i) &&
      i.getIndexDetails.getTypeUrl == BitmapIndexRemap.DetailsType

  private final class Search(io: FileIO, s: Snapshot, indices: Seq[TableProtos.IndexMetadata]) {
    private val present: Set[Long] = s.fragments.map(_.getId).toSet
    // One index a column (see rank).
    private val byColumn: Map[String, TableProtos.IndexMetadata] = indices.sortBy(rank)
      .reverse.flatMap(i => s.schema.fields.find(_.id == i.getFields(0)).map(_.name -> i)).toMap

    def visit(f: RowFilter): Option[Candidates] = f match {
      case a: And =>
        // Leaves on one indexed column are looked up together: `x >= 5 AND x < 9` reads
        // the pages of that range, not those of each side.
        val (leaves, others) = conjuncts(a).partition(l => column(l).exists(byColumn.contains))
        val parts = leaves.groupBy(l => column(l).get).toSeq.map { case (c, ls) =>
          leaf(c, ls.reduce(And(_, _)))
        } ++ others.map(visit)
        parts.flatten.reduceOption(and)
      case Or(l, r) => for (a <- visit(l); b <- visit(r)) yield or(a, b)
      case Const(false) => Some(Map.empty)
      case _ => column(f).flatMap(c => leaf(c, f))
    }

    private def conjuncts(f: RowFilter): Seq[RowFilter] = f match {
      case And(l, r) => conjuncts(l) ++ conjuncts(r)
      case other => Seq(other)
    }

    /** The column of a leaf an index can answer. */
    private def column(f: RowFilter): Option[String] = f match {
      case c: Compare if c.op != CompareOp.NotEq => Some(c.column)
      case in: In if !in.negated => Some(in.column)
      case n: IsNull if !n.negated => Some(n.column)
      case _ => None
    }

    private def leaf(column: String, f: RowFilter): Option[Candidates] =
      byColumn.get(column).flatMap { i =>
        val covered = Rewrite.bitmap(i)
        try lookup(i, f).map { hits =>
            present.iterator.flatMap { id =>
              if (!covered.contains(id.toInt)) Some(id -> None)
              else hits.get(id).map(rows => id -> rows)
            }.toMap
          }
        catch {
          case e: Exception =>
            log.warn(s"Index ${i.getName} of ${s.root} was not used to prune fragments: " +
              e.getMessage)
            None
        }
      }

    private def dir(i: TableProtos.IndexMetadata): String =
      DatasetLayout.indexDir(s.root, ManifestFile.uuidText(i.getUuid))

    /**
     * The rows (by fragment) the index holds a value matching `f` for (a fragment's None:
     * every row); None when the lookup would cost too much.
     */
    private def lookup(
        i: TableProtos.IndexMetadata,
        f: RowFilter
    ): Option[Map[Long, Option[RoaringBitmap]]] =
      if (isBitmap(i)) Some(bitmapLookup(i, f))
      else if (isZoneMap(i)) Some(zoneMapLookup(i, f))
      else btreeLookup(i, f)

    /**
     * A ZONEMAP index (pylance 14's `zonemap.lance`): a row per zone of a fragment — the
     * zone's `min` and `max` value (nulls aside), `null_count`, `nan_count`, `fragment_id`
     * and its span of row offsets (`zone_start`, `zone_length`; a zone holds up to
     * `rows_per_zone` live rows, its span deleted ones too). The spans of the zones whose
     * range meets `f`.
     */
    private def zoneMapLookup(
        i: TableProtos.IndexMetadata,
        f: RowFilter
    ): Map[Long, Option[RoaringBitmap]] = {
      val (layout, reader) = IndexFileLayout.open(
        io,
        Paths.join(dir(i), ZoneMapFile),
        ScalarIndexes.fileSize(i, ZoneMapFile)
      )
      val out = scala.collection.mutable.HashMap.empty[Long, RoaringBitmap]
      try {
        layout.expect(
          "min",
          "max",
          "null_count",
          "nan_count",
          "fragment_id",
          "zone_start",
          "zone_length"
        )
        val n = reader.numRows.toInt
        val cols = reader.scan(layout.fields, 0, n).next(n)
        val byName = layout.fields.map(_.name).zip(cols).toMap
        val ok = new RowFilterEvaluator(pageTest(f), layout.fields.map(x => x.name -> x).toMap)
          .evaluate(byName, n)
        def longs(c: String) = ByteBuffer.wrap(byName(c).asInstanceOf[FixedWidthArray].data)
          .order(ByteOrder.LITTLE_ENDIAN)
        val (frag, start, length) =
          (longs("fragment_id"), longs("zone_start"), longs("zone_length"))
        var r = 0
        while (r < n) {
          if (ok(r)) {
            val from = start.getLong(r * 8)
            out.getOrElseUpdate(frag.getLong(r * 8), new RoaringBitmap())
              .add(from, from + length.getLong(r * 8))
          }
          r += 1
        }
      } finally reader.close()
      out.iterator.map { case (id, rows) => id -> Some(rows) }.toMap
    }

    /**
     * A BITMAP index (see [[BitmapIndexRemap]]): the values matching `f` among its keys, and
     * the union of their rows.
     */
    private def bitmapLookup(
        i: TableProtos.IndexMetadata,
        f: RowFilter
    ): Map[Long, Option[RoaringBitmap]] = {
      val path = Paths.join(dir(i), BitmapIndexRemap.LookupFile)
      val (layout, reader) =
        IndexFileLayout.open(io, path, ScalarIndexes.fileSize(i, BitmapIndexRemap.LookupFile))
      val out = scala.collection.mutable.HashMap.empty[Long, Option[RoaringBitmap]]
      try {
        layout.expect("keys", "bitmaps")
        val n = reader.numRows.toInt
        val cols = reader.scan(layout.fields, 0, n).next(n)
        val ok = new RowFilterEvaluator(rename(f, "keys"), Map("keys" -> layout.fields.head))
          .evaluate(_ => cols(0), n)
        val maps = cols(1).asInstanceOf[VarBinaryArray]
        var r = 0
        while (r < n) {
          if (ok(r)) {
            val bytes =
              java.util.Arrays.copyOfRange(maps.data, maps.offsets(r), maps.offsets(r + 1))
            RowAddrTreeMap.entries(bytes).foreach { case (frag, entry) =>
              val rows = RowAddrTreeMap.offsets(entry, frag, path)
              out(frag) = out.get(frag).fold(rows)(orRows(_, rows))
            }
          }
          r += 1
        }
      } finally reader.close()
      out.toMap
    }

    /** A BTREE index (see [[BTreeIndexWriter]]); None when `f` spans too many pages. */
    private def btreeLookup(
        i: TableProtos.IndexMetadata,
        f: RowFilter
    ): Option[Map[Long, Option[RoaringBitmap]]] = {
      val dir = this.dir(i)
      val (lookupFile, lookupReader) = IndexFileLayout.open(
        io,
        Paths.join(dir, BTreeIndexWriter.LookupFile),
        ScalarIndexes.fileSize(i, BTreeIndexWriter.LookupFile)
      )
      val (batch, pages, total) =
        try {
          lookupFile.expect("min", "max", "null_count", "page_idx")
          if (!lookupFile.metadata.get("range_partitioned").forall(_ == "false")) return None
          val batch = lookupFile.metadata.get("batch_size").map(_.toLong).getOrElse(
            throw new IllegalStateException("its page lookup has no batch_size")
          )
          val (pages, total) = matchingPages(lookupFile, lookupReader, f)
          (batch, pages, total)
        } finally lookupReader.close()
      if (pages.length > 2 && pages.length * MaxPageShare > total) return None
      val data = BTreePageData.open(io, dir, ScalarIndexes.fileSize(i, BTreeIndexWriter.DataFile))
      val hits =
        try {
          val test = new RowFilterEvaluator(rename(f, "values"), Map("values" -> data.values))
          LiveRows.allowList(pages.iterator.flatMap { p =>
            val start = p * batch
            val end = math.min(start + batch, data.numRows)
            if (start >= end) Iterator.empty
            else {
              val (v, ids) = data.rows(start, end)
              val ok = test.evaluate(_ => v, v.length)
              ok.indices.iterator.filter(ok).map(r => ids.getLong(r * 8))
            }
          })
        } finally data.close()
      Some(hits.map { case (frag, rows) => frag -> Some(rows) })
    }

    /** The pages (`page_idx`) whose value range can hold a row matching `f`, and how many. */
    private def matchingPages(
        layout: IndexFileLayout,
        reader: LanceFileReader,
        f: RowFilter
    ): (Array[Long], Int) = {
      val n = reader.numRows.toInt
      val cols = reader.scan(layout.fields, 0, n).next(n)
      val byName = Map("min" -> cols(0), "max" -> cols(1), "null_count" -> cols(2))
      val idx = cols(3)
      val fields = layout.fields.map(x => x.name -> x).toMap
      val ok = new RowFilterEvaluator(pageTest(f), fields).evaluate(byName, n)
      val ids = ByteBuffer.wrap(idx.asInstanceOf[FixedWidthArray].data)
        .order(ByteOrder.LITTLE_ENDIAN)
      (ok.indices.filter(ok).map(r => ids.getInt(r * 4) & 0xffffffffL).toArray, n)
    }
  }

  /**
   * Whether a page (its first value `min`, last value `max`: nulls sort first, so `min` may
   * be null and an all-null page has a null `max`) can hold a row matching `f` (leaves of one
   * column, or their conjunction):
   * a filter over the lookup file's `min`, `max` and `null_count`.
   */
  private def pageTest(f: RowFilter): RowFilter = f match {
    case And(l, r) => And(pageTest(l), pageTest(r))
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

  /** The leaves `f` (one or a conjunction) over the column `to` instead of their own. */
  private def rename(f: RowFilter, to: String): RowFilter = f match {
    case And(l, r) => And(rename(l, to), rename(r, to))
    case c: Compare => c.copy(column = to)
    case in: In => in.copy(column = to)
    case n: IsNull => n.copy(column = to)
    case other => other
  }
}
