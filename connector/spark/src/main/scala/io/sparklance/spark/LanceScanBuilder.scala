package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.aggregate.{Aggregation, CountStar}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.connector.read.{
  Scan,
  ScanBuilder,
  SupportsPushDownAggregates,
  SupportsPushDownLimit,
  SupportsPushDownOffset,
  SupportsPushDownRequiredColumns,
  SupportsPushDownTopN,
  SupportsPushDownV2Filters
}
import org.apache.spark.sql.connector.expressions.SortOrder
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.StructType

import io.sparklance.spark.aggregate.{PartialAggregate, PartialAggregateCompiler}
import io.sparklance.table.RowFilter

/**
 * Builds the scan of one table version: column pruning (nested too), predicates the reader
 * evaluates exactly (see [[FilterTranslator]]), COUNT(*), LIMIT and TopN.
 *
 * Pushed predicates are not re-checked by Spark: the reader keeps exactly the rows for which
 * they are TRUE, so Spark drops its Filter and may push a COUNT(*) on top. Without a filter,
 * COUNT(*) is answered from the manifests; with one, each task counts the rows that pass and
 * Spark sums the partial counts. Other aggregations Spark pushes (grouped or not) are computed
 * per task where that is exact ([[LanceAggregateScan]]), Spark adding the partials up.
 *
 * With `keepFilters` (a join side [[KeepFiltersForPruning]] marked), Spark still evaluates
 * the pushed predicates after the scan, so its dynamic pruning sees this side as selective.
 * `likes` are the LIKE patterns [[LikePushDown]] took from Spark's filter: always evaluated.
 */
class LanceScanBuilder(
    table: LanceTable,
    keepFilters: Boolean = false,
    likes: Seq[LikePushDown.Pushed] = Nil
) extends ScanBuilder
    with SupportsPushDownRequiredColumns with SupportsPushDownV2Filters
    with SupportsPushDownAggregates with SupportsPushDownLimit with SupportsPushDownOffset
    with SupportsPushDownTopN {

  private var required: StructType = table.schema()
  private var countOnly = false

  /** The LIKE patterns, translated (the rule checked that each translates). */
  private val likeFilters: Seq[RowFilter] = likes.map { l =>
    val f = new FilterTranslator(table.snapshot.schema, table.schema()).like(l.column, l.pattern)
      .getOrElse(throw new IllegalStateException(s"${l.sql} cannot be evaluated by the reader"))
    if (l.negated) RowFilter.not(f) else f
  }

  private var filter: Option[RowFilter] =
    if (likeFilters.isEmpty) None else Some(RowFilter.all(likeFilters))
  private var pushed: Array[Predicate] = Array.empty
  private var limit: Option[Int] = None
  private var offset = 0
  private var topN: Option[TopNSpec] = None

  override def pruneColumns(requiredSchema: StructType): Unit = required = requiredSchema

  private var fragmentTest: Option[Long => Boolean] = None
  private var addressed: Option[io.sparklance.table.index.IndexPruning.Candidates] = None

  override def pushPredicates(predicates: Array[Predicate]): Array[Predicate] = {
    // Predicates on _fragid/_rowaddr pick fragments, those naming addresses rows; Spark still
    // evaluates them.
    fragmentTest = predicates.flatMap(FragmentPruning.of).reduceOption((a, b) =>
      (id: Long) => a(id) && b(id)
    )
    addressed = RowAddressPruning.of(predicates.toSeq)
    pushRowFilters(predicates)
  }

  private def pushRowFilters(predicates: Array[Predicate]): Array[Predicate] =
    if (!table.options.filterPushdown) predicates
    else {
      val translator = new FilterTranslator(table.snapshot.schema, table.schema())
      val (translated, left) =
        predicates.map(p => p -> translator.translate(p)).partition(_._2.isDefined)
      // `c IS NOT NULL` on a column the data files prove null-free holds for every row: it is
      // taken but not kept, so scans differing only by it (Spark infers it from joins) are
      // equal and Spark reuses their exchanges.
      val done = translated.filterNot {
        case (_, Some(RowFilter.IsNull(c, true))) => table.provesNoNulls(c)
        case _ => false
      }
      pushed = done.map(_._1)
      val all = done.toSeq.map(_._2.get) ++ likeFilters
      filter = if (all.isEmpty) None else Some(RowFilter.all(all))
      if (keepFilters) predicates else left.map(_._1)
    }

  override def pushedPredicates(): Array[Predicate] = pushed

  /** What the scan shows as pushed (and tells scans apart by): predicates, then LIKEs. */
  private def pushedText: Seq[String] = pushed.map(_.toString).toSeq ++ likes.map(_.sql)

  private def isBareCount(aggregation: Aggregation): Boolean =
    aggregation.groupByExpressions().isEmpty &&
      aggregation.aggregateExpressions().nonEmpty &&
      aggregation.aggregateExpressions().forall(_.isInstanceOf[CountStar])

  private var answered: Option[(Aggregation, Option[LanceIndexAggregateScan])] = None

  /**
   * MIN/MAX (with COUNT(*)) of the whole table, when indices answer them exactly (see
   * [[LanceIndexAggregateScan]]); looked up once per aggregation.
   */
  private def fromIndices(aggregation: Aggregation): Option[LanceIndexAggregateScan] =
    if (filter.isDefined || !table.options.useScalarIndex) None
    else answered.filter(_._1 eq aggregation).map(_._2).getOrElse {
      val scan = LanceIndexAggregateScan.answer(table, aggregation)
      answered = Some(aggregation -> scan)
      scan
    }

  /**
   * A bare COUNT(*) (Spark turns count() and count(1) into it), with no grouping;
   * MIN/MAX/COUNT(*) of the whole table answered by its indices; or an aggregation each task
   * computes exactly over its rows ([[PartialAggregateCompiler]], [[LanceAggregateScan]]).
   */
  override def pushAggregation(aggregation: Aggregation): Boolean = {
    countOnly = isBareCount(aggregation)
    partial = None
    nearlyDistinct = false
    if (countOnly || fromIndices(aggregation).isDefined) true
    else {
      partial = partialOf(aggregation)
      partial.isDefined
    }
  }

  /**
   * The aggregation each task computes over its rows, when it can exactly and, grouped, when
   * the groups fold the rows enough to pay ([[GroupingSampler]]).
   */
  private var partial: Option[PartialAggregate] = None

  /**
   * Whether the sample found the grouping Spark pushed to fold few rows: the rows then go to
   * Spark's aggregation in one split per core ([[LanceBatch.planInputPartitions]]).
   */
  private var nearlyDistinct = false

  private def partialOf(aggregation: Aggregation): Option[PartialAggregate] =
    if (!table.options.aggregatePushdown) None
    else {
      val conf = SQLConf.get
      val exact = new PartialAggregateCompiler(
        table.schema(),
        conf.decimalOperationsAllowPrecisionLoss,
        conf.ansiEnabled
      ).compile(aggregation)
      val worth = exact.filter(spec =>
        GroupingSampler.worthPushing(
          table,
          spec,
          filter,
          pushedText,
          fragmentTest,
          addressed
        )
      )
      nearlyDistinct = exact.isDefined && worth.isEmpty
      worth
    }

  /**
   * Complete when the manifests or indices answer it; with a filter, tasks return partial
   * counts.
   */
  override def supportCompletePushDown(aggregation: Aggregation): Boolean =
    (isBareCount(aggregation) && filter.isEmpty) || fromIndices(aggregation).isDefined

  /**
   * A LIMIT over the scan (Spark pushes one only when nothing is left to filter after the
   * scan). Without a pushed filter the scan returns exactly the first `n` rows in table order
   * (see [[io.sparklance.table.RowWindow]]), so Spark drops its own limit; with one, each task
   * stops after `n` rows that pass it and Spark applies the limit on top.
   */
  override def pushLimit(n: Int): Boolean = {
    if (countOnly || partial.isDefined || topN.isDefined || n < 0) return false
    limit = Some(n)
    true
  }

  /**
   * `ORDER BY` columns `LIMIT n` (Spark pushes one only when nothing is left to filter after
   * the scan), for keys that are data columns of orderable types and `n` up to
   * [[TopNSpec.MaxRows]]: each task returns its own first `n` rows in that order, reading the
   * other columns of those rows only ([[LanceTopNReader]]); Spark sorts and limits on top.
   */
  override def pushTopN(orders: Array[SortOrder], limit: Int): Boolean = {
    if (
      !table.options.topNPushdown || countOnly || partial.isDefined || this.limit.isDefined ||
      offset > 0
    ) return false
    topN = TopNSpec.of(orders, limit, table.schema())
    topN.isDefined
  }

  override def isPartiallyPushed(): Boolean = narrowsRows || topN.isDefined

  /**
   * Whether something besides LIMIT/OFFSET picks the rows: a pushed filter, or predicates on
   * `_fragid`/`_rowaddr`. Then the scan cannot return an exact window (see LanceScan).
   */
  private def narrowsRows: Boolean =
    filter.isDefined || fragmentTest.isDefined || addressed.isDefined

  /**
   * An OFFSET (after the LIMIT, which then counts the skipped rows too): without a pushed
   * filter, the scan skips the first `n` rows in table order, as pylance's
   * `to_table(offset=)`; with one, which rows are skipped is only known by reading, so Spark
   * keeps the offset.
   */
  override def pushOffset(n: Int): Boolean = {
    if (countOnly || partial.isDefined || narrowsRows || topN.isDefined || n < 0) return false
    offset = n
    true
  }

  override def build(): Scan =
    if (partial.isDefined)
      new LanceAggregateScan(
        new LanceScan(
          table,
          partial.get.input,
          filter,
          pushedText,
          countRows = false,
          fragmentTest,
          addressed = addressed
        ),
        partial.get
      )
    else if (!countOnly && answered.exists(_._2.isDefined)) answered.get._2.get
    else if (countOnly && filter.isEmpty) new LanceCountScan(table)
    else if (countOnly)
      new LanceScan(
        table,
        LanceScan.CountSchema,
        filter,
        pushedText,
        countRows = true,
        fragmentTest,
        addressed = addressed
      )
    else new LanceScan(
      table,
      required,
      filter,
      pushedText,
      countRows = false,
      fragmentTest,
      limit,
      addressed,
      offset,
      topN,
      perCore = nearlyDistinct
    )
}
