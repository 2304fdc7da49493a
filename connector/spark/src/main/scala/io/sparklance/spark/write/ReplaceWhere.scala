package io.sparklance.spark.write

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation

import io.sparklance.LanceErrors
import io.sparklance.spark.{FilterTranslator, LanceScan, SchemaConverter}
import io.sparklance.table.{RowFilter, Snapshot}

/**
 * The rows an overwrite by condition replaces (Delta's `replaceWhere` option, Spark's
 * `writeTo(t).overwrite(condition)` and `INSERT INTO t REPLACE WHERE condition`), as the
 * reader's [[RowFilter]]: the condition must be one the Lance reader evaluates exactly (the
 * rows it matches are deleted, so a condition half understood would delete the wrong rows),
 * else the write is refused before anything is written.
 */
private[spark] object ReplaceWhere {

  /** Spark's own predicates (already resolved and translated by Spark), all of them ANDed. */
  def fromPredicates(s: Snapshot, predicates: Array[Predicate]): (RowFilter, String) = {
    val text = predicates.map(_.toString).mkString(" AND ")
    val t = new FilterTranslator(s.schema, SchemaConverter.toSpark(s.schema))
    val filters = predicates.map(p =>
      t.translate(p).getOrElse(throw cannot(
        s.root,
        text,
        s"'$p' is not a predicate the Lance reader evaluates"
      ))
    )
    (RowFilter.all(filters.toSeq), text)
  }

  /**
   * A SQL condition over the dataset's columns, resolved by Spark against the dataset at
   * `root` and pushed into its scan as a query's filter would be: every part must reach the
   * reader (no Filter left above the scan). A condition Spark proves false matches nothing.
   */
  def fromCondition(
      spark: SparkSession,
      readOptions: Map[String, String],
      root: String,
      condition: String
  ): RowFilter = {
    val df = spark.read.format("lance").options(readOptions).load(root).where(condition)
    val plan = df.queryExecution.optimizedPlan
    if (plan.find(_.isInstanceOf[Filter]).isDefined)
      throw cannot(root, condition, "a part of it is not a predicate the Lance reader evaluates")
    val scans = plan.collect { case r: DataSourceV2ScanRelation => r.scan }
    scans match {
      case Seq(s: LanceScan) if !s.prunesFragments => s.rowFilter.getOrElse(RowFilter.Const(true))
      case Seq() if plan.isInstanceOf[LocalRelation] => RowFilter.Const(false)
      case _ => throw cannot(root, condition, "it is not a predicate the Lance reader evaluates")
    }
  }

  private def cannot(root: String, condition: String, why: String) =
    LanceErrors.invalidOption(
      "replaceWhere",
      condition,
      s"cannot replace the rows of $root " +
        s"matching it: $why (comparisons, IN, IS [NOT] NULL, LIKE prefix/suffix/contains, AND, " +
        "OR, NOT over top-level integer, floating, string, boolean, date and timestamp columns)"
    )
}
