package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.analysis.NamedRelation
import org.apache.spark.sql.catalyst.expressions.Literal
import org.apache.spark.sql.catalyst.plans.logical.{AppendData, LogicalPlan, OverwriteByExpression}

/**
 * Spark's DataSource V2 write commands by column name, as `DataFrameWriter` and `writeTo`
 * build them: the analyzer then fits the query to the table (by name, with the store
 * assignment policy's casts) unless the table accepts any schema.
 *
 * Built reflectively: later 4.x releases add trailing parameters (4.3: schema evolution),
 * left at their defaults here, so one build serves every 4.x line.
 */
private[spark] object V2WriteCommands {

  /** Appends `query`'s rows to `table`. */
  def append(table: NamedRelation, query: LogicalPlan): LogicalPlan =
    byName(AppendData, table, query)

  /** Replaces all of `table` with `query`'s rows (Spark truncates, then writes). */
  def overwrite(table: NamedRelation, query: LogicalPlan): LogicalPlan =
    byName(OverwriteByExpression, table, query, Literal.TrueLiteral)

  private def byName(companion: AnyRef, args: AnyRef*): LogicalPlan = {
    val cls = companion.getClass
    val method = cls.getMethods.filter(_.getName == "byName").maxBy(_.getParameterCount)
    val defaults = (args.size until method.getParameterCount).map { i =>
      cls.getMethods.find(_.getName == "byName$default$" + (i + 1)).getOrElse(
        throw new IllegalStateException(s"Spark ${org.apache.spark.SPARK_VERSION}: no default " +
          s"for parameter ${i + 1} of ${cls.getSimpleName.stripSuffix("$")}.byName")
      )
        .invoke(companion)
    }
    method.invoke(companion, (args ++ defaults): _*).asInstanceOf[LogicalPlan]
  }
}
