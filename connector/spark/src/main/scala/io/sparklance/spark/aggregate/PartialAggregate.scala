package io.sparklance.spark.aggregate

import org.apache.spark.sql.types._

/** A group-by column: `ordinal` in the scan's input schema. */
final case class GroupCol(ordinal: Int, name: String, dataType: DataType)

/** One pushed aggregate function, as each task computes its partial value. */
sealed abstract class AggFn extends Serializable {

  /** The type of the partial value a task returns (Spark's type for it). */
  def dataType: DataType
}

object AggFn {

  /** COUNT(*). */
  case object CountAll extends AggFn {
    def dataType: DataType = LongType
    override def toString: String = "count(*)"
  }

  /** COUNT(expr): the rows where `expr` is not NULL. */
  final case class CountOf(expr: PartialExpr) extends AggFn {
    def dataType: DataType = LongType
    override def toString: String = s"count($expr)"
  }

  /**
   * SUM(expr), of an integer (a LONG partial; `ansi`: overflow fails, else wraps as Spark's
   * does) or a decimal expression (Spark's SUM type, 10 more digits).
   */
  final case class SumOf(expr: PartialExpr, ansi: Boolean) extends AggFn {
    def dataType: DataType = expr.t.dataType match {
      case d: DecimalType => DecimalType(math.min(38, d.precision + 10), d.scale)
      case _ => LongType
    }
    override def toString: String = s"sum($expr)"
  }

  /**
   * MIN or MAX of an integer, date or decimal column or of a string's length (compared as
   * unscaled longs): only expressions whose every value fits a long (none is
   * [[PartialExpr.Big]]).
   */
  final case class Extreme(value: PartialExpr, dataType: DataType, isMax: Boolean)
      extends AggFn {
    override def toString: String = s"${if (isMax) "max" else "min"}($value)"
  }
}

/**
 * An aggregation a Lance scan computes per task (Spark aggregates the tasks' partial rows):
 * the columns it reads (`input`), the group-by columns and the aggregate functions. The
 * output row is the group columns then one partial value per function, as `outputSchema`.
 */
final case class PartialAggregate(input: StructType, groups: Seq[GroupCol], aggs: Seq[AggFn]) {
  def outputSchema: StructType = StructType(
    groups.zipWithIndex.map { case (g, i) => StructField(s"group_col_$i", g.dataType) } ++
      aggs.zipWithIndex.map { case (a, i) => StructField(s"agg_func_$i", a.dataType) }
  )
}
