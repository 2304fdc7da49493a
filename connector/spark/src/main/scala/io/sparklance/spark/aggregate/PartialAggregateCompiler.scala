package io.sparklance.spark.aggregate

import org.apache.spark.sql.connector.expressions.{
  Cast => V2Cast,
  Expression,
  GeneralScalarExpression,
  Literal,
  NamedReference
}
import org.apache.spark.sql.connector.expressions.aggregate.{
  AggregateFunc,
  Aggregation,
  Count,
  CountStar,
  Max,
  Min,
  Sum
}
import org.apache.spark.sql.types._

/**
 * Decides whether a Lance scan can compute an aggregation Spark pushes partially, and builds
 * it ([[PartialAggregate]]). Accepted: group-by columns (strings, integers, dates,
 * timestamps, booleans, decimals of at most 18 digits); COUNT(*), COUNT, SUM of integer and
 * decimal expressions (columns, literals and the lengths of string columns under `+`, `-`,
 * `*` and widening casts, in the exact result types Spark gives them) and MIN/MAX of integer,
 * date and decimal columns and of string lengths; no DISTINCT. Whatever would round, or whose
 * type this cannot state exactly as Spark does, is declined, so Spark aggregates it as before.
 * Floating-point SUMs are declined: their value depends on the order of addition.
 *
 * @param schema             the table's columns
 * @param allowPrecisionLoss `spark.sql.decimalOperations.allowPrecisionLoss`
 * @param ansi               `spark.sql.ansi.enabled`
 */
final class PartialAggregateCompiler(
    schema: StructType,
    allowPrecisionLoss: Boolean,
    ansi: Boolean
) {

  private val columns = scala.collection.mutable.LinkedHashMap[String, StructField]()

  def compile(agg: Aggregation): Option[PartialAggregate] = {
    val groups = agg.groupByExpressions().toSeq.map(groupCol)
    val aggs = agg.aggregateExpressions().toSeq.map(function)
    if (
      groups.exists(_.isEmpty) || aggs.exists(_.isEmpty) || groups.length > 62 ||
      columns.isEmpty
    ) None
    else {
      val input = StructType(columns.values.toSeq)
      Some(PartialAggregate(input, groups.flatten, aggs.flatten))
    }
  }

  private def ordinal(name: String): Int = columns.keys.toSeq.indexOf(name)

  /** A top-level column of the table, added to the scan's input. */
  private def column(e: Expression): Option[(Int, StructField)] = e match {
    case r: NamedReference if r.fieldNames().length == 1 =>
      val name = r.fieldNames()(0)
      schema.fields.find(_.name == name).map { f =>
        columns.getOrElseUpdate(f.name, f)
        ordinal(f.name) -> f
      }
    case _ => None
  }

  private def groupCol(e: Expression): Option[GroupCol] =
    column(e).filter(c => GroupKeys.supports(c._2.dataType))
      .map { case (i, f) => GroupCol(i, f.name, f.dataType) }

  private def function(f: AggregateFunc): Option[AggFn] = f match {
    case _: CountStar => Some(AggFn.CountAll)
    case c: Count if !c.isDistinct => expr(c.column()).map(AggFn.CountOf)
    case s: Sum if !s.isDistinct => expr(s.column()).map(AggFn.SumOf(_, ansi))
    case m: Min => extreme(m.column(), isMax = false)
    case m: Max => extreme(m.column(), isMax = true)
    case _ => None
  }

  private def extreme(e: Expression, isMax: Boolean): Option[AggFn] = e match {
    case g: GeneralScalarExpression => length(g).map(l => AggFn.Extreme(l, l.t.dataType, isMax))
    case _ =>
      column(e).filter(c => NumType.numeric(c._2.dataType) || c._2.dataType == DateType).map {
        case (i, f) =>
          AggFn.Extreme(PartialExpr.Col(i, f.name, NumType(f.dataType)), f.dataType, isMax)
      }
  }

  /** An exact integer or decimal expression, or None. */
  private def expr(e: Expression): Option[PartialExpr] = e match {
    case _: NamedReference =>
      column(e).filter(c => NumType.numeric(c._2.dataType))
        .map { case (i, f) => PartialExpr.Col(i, f.name, NumType(f.dataType)) }
    case l: Literal[_] => literal(l.value(), l.dataType())
    case c: V2Cast => expr(c.expression()).flatMap(widen(_, c.dataType()))
    case g: GeneralScalarExpression
        if g.children().length == 2 &&
          Set("+", "-", "*").contains(g.name()) =>
      for {
        l <- expr(g.children()(0))
        r <- expr(g.children()(1))
        t <- resultType(g.name().head, l.t, r.t)
      } yield PartialExpr.Arith(g.name().head, l, r, NumType(t))
    case g: GeneralScalarExpression => length(g)
    case _ => None
  }

  /** `CHAR_LENGTH` or `BIT_LENGTH` of a string column, or None. */
  private def length(g: GeneralScalarExpression): Option[PartialExpr.Length] =
    if (g.children().length != 1 || (g.name() != "CHAR_LENGTH" && g.name() != "BIT_LENGTH")) None
    else column(g.children()(0)).collect {
      case (i, f) if f.dataType.isInstanceOf[StringType] =>
        PartialExpr.Length(i, f.name, bits = g.name() == "BIT_LENGTH")
    }

  private def literal(v: Any, t: DataType): Option[PartialExpr] = (v, t) match {
    case (d: Decimal, dt: DecimalType) if dt.precision <= 18 =>
      scala.util.Try(d.toJavaBigDecimal.setScale(dt.scale).unscaledValue().longValueExact())
        .toOption.map(u => PartialExpr.Lit(u, NumType(dt)))
    case (n: java.lang.Number, _) if NumType.integral(t) =>
      Some(PartialExpr.Lit(n.longValue(), NumType(t)))
    case _ => None
  }

  /** A cast that keeps every value (or fails on range, as ANSI casts do): to a wider scale. */
  private def widen(child: PartialExpr, to: DataType): Option[PartialExpr] =
    (child.t.dataType, to) match {
      case (from, target) if from == target => Some(child)
      case (from: DecimalType, target: DecimalType)
          if target.scale >= from.scale &&
            target.scale - from.scale <= 18 =>
        Some(PartialExpr.Widen(child, NumType(target)))
      case (from, target: DecimalType) if NumType.integral(from) && target.scale <= 18 =>
        Some(PartialExpr.Widen(child, NumType(target)))
      case (from, target)
          if NumType.integral(from) && NumType.integral(target) &&
            target.defaultSize >= from.defaultSize =>
        Some(PartialExpr.Widen(child, NumType(target)))
      case _ => None
    }

  /**
   * Spark's result type of `l op r` (both operands already of one kind: Spark's analyzer
   * casts an integer operand of a decimal one), when it keeps the exact scale.
   */
  private def resultType(op: Char, l: NumType, r: NumType): Option[DataType] =
    (l.dataType, r.dataType) match {
      case (a: DecimalType, b: DecimalType) =>
        val (p, s) =
          if (op == '*') (a.precision + b.precision + 1, a.scale + b.scale)
          else {
            val s = math.max(a.scale, b.scale)
            (math.max(a.precision - a.scale, b.precision - b.scale) + s + 1, s)
          }
        val (bp, bs) =
          if (p <= 38) (p, s)
          else if (allowPrecisionLoss) {
            val intDigits = p - s
            (38, math.max(38 - intDigits, math.min(s, 6)))
          } else (38, math.min(s, 38))
        if (bs == s && s <= 18) Some(DecimalType(bp, bs)) else None
      case (a, b) if a == b && NumType.integral(a) => Some(a)
      case _ => None
    }
}
