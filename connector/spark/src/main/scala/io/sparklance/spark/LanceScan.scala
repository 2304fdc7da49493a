package io.sparklance.spark

import java.util.OptionalLong

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import io.sparklance.format.LanceField
import io.sparklance.table.{FragmentLineage, FragmentRef, MatchKind, RowFilter, RowWindow}
import io.sparklance.table.index.IndexPruning

/**
 * A columnar scan of one dataset version. The version (and so the fragment list) was fixed
 * when the table was loaded; planning splits and packs fragments into partitions, and each
 * partition decodes straight into Spark column vectors. With `countRows`, the scan returns
 * one row per partition holding how many rows passed `filter` (a pushed partial COUNT(*)).
 *
 * Spark's dynamic pruning may add runtime filters (`filter(predicates)`: the join keys the
 * other side of a broadcast join holds, as an IN list) before the tasks are planned; the
 * scan then keeps only rows whose key is in the list, and the indices and zone maps prune
 * fragments by it as by a pushed filter.
 */
class LanceScan(
    table: LanceTable,
    required: StructType,
    filter: Option[RowFilter],
    pushed: Seq[String],
    countRows: Boolean,
    fragmentTest: Option[Long => Boolean] = None,
    limit: Option[Int] = None,
    addressed: Option[IndexPruning.Candidates] = None,
    offset: Int = 0,
    topN: Option[TopNSpec] = None,
    perCore: Boolean = false
) extends Scan with SupportsReportStatistics with SupportsRuntimeV2Filtering {

  /**
   * Runtime filters Spark gave (dynamic pruning), translated. Their translations tell them
   * apart (not their text: a list of a million join keys takes a while to print).
   */
  private var runtime: Seq[RowFilter] = Nil

  /** The predicate the reader evaluates exactly (pushed and translated), if any. */
  def rowFilter: Option[RowFilter] = filter

  /** The pushed filter and the runtime ones: what the tasks evaluate. */
  private def effective: Option[RowFilter] =
    (filter.toSeq ++ runtime).reduceOption(RowFilter.And(_, _))

  /** Whether predicates on `_fragid`/`_rowaddr` pick the fragments scanned. */
  def prunesFragments: Boolean = fragmentTest.isDefined

  /** Whether [[withColumns]] may narrow the scan (a partial COUNT(*) has no columns). */
  def prunable: Boolean = !countRows

  /** The same scan returning only `columns` (some of [[readSchema]]), the filter unchanged. */
  def withColumns(columns: StructType): LanceScan =
    new LanceScan(
      table,
      columns,
      filter,
      pushed,
      countRows,
      fragmentTest,
      limit,
      addressed,
      offset,
      topN,
      perCore
    )

  /**
   * The TopN Spark pushed, when the columns read hold its keys (Spark reads the columns it
   * sorts by; a scan narrowed without them sorts nothing): each task returns its best rows.
   */
  private def pushedTopN: Option[TopNSpec] =
    topN.filter(_.columns.forall(c => fields.exists(_.name == c)))

  /** Requested metadata columns (`_rowid`, ...) by their position in `required`. */
  private val metadata: Seq[(Int, LanceMetadataColumns.Column)] =
    if (countRows) Nil
    else required.fields.toSeq.zipWithIndex.flatMap { case (sf, i) =>
      if (table.snapshot.schema.field(sf.name).isDefined) None
      else LanceMetadataColumns.byName(sf.name).map(i -> _)
    }

  /** The requested columns as Lance fields, pruned to the nested children Spark asked for. */
  private val fields: Seq[LanceField] =
    if (countRows) Nil
    else required.fields.toSeq.zipWithIndex.filterNot(c => metadata.exists(_._1 == c._2))
      .map(_._1).map { sf =>
        val f = table.snapshot.schema.field(sf.name).getOrElse(
          throw new IllegalStateException(
            s"Spark asked for column '${sf.name}', which ${table.name()} lacks"
          )
        )
        SchemaConverter.prune(f, sf.dataType)
      }

  /** Every (top-level) field the filter reads, projected or not. */
  private def filterFields: Seq[LanceField] =
    effective.toSeq.flatMap(_.columns).sorted.map { c =>
      table.snapshot.schema.field(c).getOrElse(
        throw new IllegalStateException(s"filter column '$c' is not in ${table.name()}")
      )
    }

  /** What planning found, recomputed when runtime filters arrive. */
  private var planned: LanceScan.Planned = _

  private def plan: LanceScan.Planned = {
    if (planned == null) {
      val indexed =
        if (!table.options.useScalarIndex) None
        else effective.flatMap(f => IndexPruning.candidates(table.io, table.snapshot, f))
      val candidates = (indexed, addressed) match {
        case (Some(a), Some(b)) => Some(IndexPruning.and(a, b))
        case (a, b) => a.orElse(b)
      }
      planned = LanceScan.Planned(candidates, planFragments(candidates))
    }
    planned
  }

  /** The rows that can be read at all: those the indices allow and the addresses named. */
  private def candidates: Option[IndexPruning.Candidates] = plan.candidates

  /**
   * Whether the scan returns exactly the rows of a pushed LIMIT / OFFSET: nothing narrows
   * the rows but them (a pushed filter leaves the limit to each task, and Spark on top).
   */
  private def windowed: Boolean =
    !countRows && (limit.isDefined || offset > 0) && filter.isEmpty && addressed.isEmpty &&
      fragmentTest.isEmpty && runtime.isEmpty

  /**
   * The rows each task returns at most: `limit` counts the skipped `offset` rows too (an
   * offset is only pushed without a filter, so with one this is the limit itself).
   */
  private def windowRows: Option[Long] = limit.map(l => math.max(0L, l.toLong - offset))

  private def fragments: Seq[FragmentRef] = plan.fragments

  private def planFragments(candidates: Option[IndexPruning.Candidates]): Seq[FragmentRef] = {
    val chosen = table.snapshot.fragments.filter(f =>
      fragmentTest.forall(_(f.getId)) &&
        candidates.forall(_.contains(f.getId))
    )
    def ref(f: io.sparklance.proto.TableProtos.DataFragment): FragmentRef = {
      val r = FragmentRef(table.snapshot.root, table.snapshot, f)
        .copy(rowCandidates = candidates.flatMap(_(f.getId)))
      if (metadata.isEmpty) r else r.copy(lineage = Some(FragmentLineage.of(f)))
    }
    if (windowed) RowWindow.of(table.io, chosen.view.map(ref), offset, windowRows)
    else chosen.map(ref)
  }

  override def readSchema(): StructType = required

  /**
   * The projected data columns a runtime filter can name: those the reader evaluates
   * predicates on. None for a partial COUNT(*), a scan bounded by LIMIT/OFFSET, or a dataset
   * under `runtime_filter_min_bytes` (Spark's pruning subquery on it costs more to plan than
   * it saves: TPC-H's `nation` and `supplier` pruned by copies of whole join trees).
   */
  override def filterAttributes(): Array[NamedReference] =
    if (
      countRows || limit.isDefined || offset > 0 ||
      table.estimatedBytes < table.options.runtimeFilterMinBytes
    ) Array.empty
    else {
      val translator = new FilterTranslator(table.snapshot.schema, table.schema())
      fields.map(_.name).filter(translator.filterable).map(n => LanceScan.column(n)).toArray
    }

  /**
   * Runtime filters from dynamic pruning. An IN list loses its NULLs first (they match no
   * row); predicates the reader cannot evaluate are dropped, as pruning is only an
   * optimization and Spark's join still applies the key condition.
   */
  override def filter(predicates: Array[Predicate]): Unit = {
    val translator = new FilterTranslator(table.snapshot.schema, table.schema())
    // Each plan node holding this scan hands it the same filters: add them once.
    val added = predicates.toSeq.flatMap(translator.translateRuntime).distinct
      .filterNot(runtime.contains)
    if (added.nonEmpty) {
      runtime = runtime ++ added
      planned = null
    }
  }

  override def supportedCustomMetrics(): Array[CustomMetric] = Array(
    new metrics.FragmentsRead,
    new metrics.StorageRequests,
    new metrics.StorageBytesRead,
    new metrics.RowsSkipped,
    new metrics.RowsSkippedByIndex
  )
  override def description(): String = {
    val what = if (countRows) "count(*)" else required.fieldNames.mkString(", ")
    val filters =
      if (pushed.isEmpty) "" else pushed.mkString(" PushedFilters: [", ", ", "]")
    val pruned = if (fragmentTest.isEmpty && candidates.isEmpty) ""
    else s" Fragments: ${fragments.size} of ${table.snapshot.fragments.size}"
    val window = (if (offset > 0) s" Offset: $offset" else "") +
      limit.fold("")(n => s" Limit: ${n - offset}") + pushedTopN.fold("")(" " + _.describe)
    s"LanceScan ${table.name()} [$what]$filters$pruned$window"
  }

  /** A new Batch each time; batches of equal scans are equal, so Spark reuses exchanges. */
  override def toBatch: Batch = new LanceBatch(
    table,
    fragments,
    fields,
    fields ++ filterFields.filterNot(f => fields.exists(_.name == f.name)),
    required,
    effective.map(f => LanceColumnarReader.FilterSpec(f, filterFields)),
    countRows,
    LanceColumnarReader.MetadataSpec(metadata),
    pushed ++ runtime,
    windowRows.map(n => math.min(n, Int.MaxValue).toInt),
    offset,
    pushedTopN,
    perCore
  )

  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.SUPPORTED

  override def estimateStatistics(): Statistics = new Statistics {
    override def numRows(): OptionalLong = OptionalLong.of(math.min(
      fragments.map(f =>
        f.rowCandidates.fold(f.physicalRows - f.numDeletedRows)(
          _.getLongCardinality
        )
      ).sum,
      limit.fold(Long.MaxValue)(_.toLong)
    ))
    override def sizeInBytes(): OptionalLong = {
      val total = fragments.map(f => SplitPlanner.estimatedBytes(f)).sum
      // Scaled by the columns read as Spark scales a Parquet table's bytes (its V1 source, the
      // default) through the projection above it: by the share of a row's size, the columns'
      // default sizes plus the 8 bytes Spark counts for any row (getSizePerRow). A scan of a
      // few numeric keys next to long strings is then estimated, and broadcast or not, as it
      // would be over Parquet (q8's orders, 3 of 9 columns read, were broadcast where Parquet's
      // were not).
      // The columns of LIKEs [[LikePushDown]] moved here count as read, as they did when
      // Spark's filter evaluated them: moving a LIKE into the scan leaves join choices as they
      // were (q13's 1.5M orders would be broadcast otherwise).
      val likes = filter.toSeq.flatMap(LanceScan.likeColumns).distinct
        .filterNot(c => required.fieldNames.contains(c))
        .flatMap(c => table.schema().fields.find(_.name == c))
      val all = LanceScan.rowSize(table.schema().fields.toSeq)
      val read = math.min(all, LanceScan.rowSize(required.fields.toSeq ++ likes))
      OptionalLong.of(math.max(1L, (BigInt(total) * read / all).toLong))
    }
  }
}

object LanceScan {

  /** A reference to top-level column `name`, taken as it is (not parsed: `a b`, `a.b`). */
  private[spark] def column(name: String): NamedReference = new NamedReference {
    override def fieldNames(): Array[String] = Array(name)
    override def describe(): String = "`" + name.replace("`", "``") + "`"
    override def toString: String = describe()
  }

  /** The bytes Spark's file sources take a row of `fields` to hold: their default sizes. */
  private[spark] def defaultWidth(fields: Seq[StructField]): Long =
    fields.map(_.dataType.defaultSize.toLong).sum

  /**
   * The bytes Spark's size estimates count for a row of `fields`: their default sizes plus 8
   * for any row (getSizePerRow, by which a projection scales its child's size).
   */
  private[spark] def rowSize(fields: Seq[StructField]): Long = 8L + defaultWidth(fields)

  /** The columns of the LIKE leaves of `f` (see [[LikePushDown]]). */
  private def likeColumns(f: RowFilter): Seq[String] = f match {
    case RowFilter.And(l, r) => likeColumns(l) ++ likeColumns(r)
    case RowFilter.Or(l, r) => likeColumns(l) ++ likeColumns(r)
    case RowFilter.StringMatch(c, MatchKind.Like, _, _) => Seq(c)
    case _ => Nil
  }

  /** The rows the indices and addresses allow, and the fragments (or window) to read. */
  private final case class Planned(
      candidates: Option[IndexPruning.Candidates],
      fragments: Seq[FragmentRef]
  )

  /** The output of a pushed partial COUNT(*): one count per partition, summed by Spark. */
  val CountSchema: StructType = StructType(Seq(StructField("count(*)", LongType, nullable = false)))
}
