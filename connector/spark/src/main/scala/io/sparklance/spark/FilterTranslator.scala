package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.{
  Expression,
  GeneralScalarExpression,
  Literal,
  NamedReference
}
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.sparklance.format.{LanceField, LanceSchema, LogicalType}
import io.sparklance.table.{CompareOp, FilterDomain, FilterValue, MatchKind, RowFilter}
import io.sparklance.table.FilterDomain.{Decimal128, Floating, Integral, Utf8Bytes}

/**
 * Turns Spark's V2 predicates into [[RowFilter]]s the reader evaluates exactly. A predicate
 * is translated only when every part of it is understood: a top-level column whose Lance
 * type the evaluator reads ([[FilterDomain.of]]), or its remainder by a constant, compared
 * with non-null literals of the column's own Spark type (Spark has already coerced both
 * sides), null tests, string
 * prefix/suffix/containment in the default (binary) collation, AND, OR, NOT. Anything else
 * stays with Spark, whole; a predicate is never half-pushed.
 */
final class FilterTranslator(schema: LanceSchema, sparkSchema: StructType) {

  def translate(p: Predicate): Option[RowFilter] = p.name() match {
    case "ALWAYS_TRUE" => Some(RowFilter.Const(true))
    case "ALWAYS_FALSE" => Some(RowFilter.Const(false))
    case "AND" => both(p).map { case (l, r) => RowFilter.And(l, r) }
    case "OR" => both(p).map { case (l, r) => RowFilter.Or(l, r) }
    case "NOT" => child(p, 0).flatMap(predicate).flatMap(translate).map(RowFilter.not)
    case "IS_NULL" | "IS_NOT_NULL" =>
      column(p, 0).map { case (name, _, _) =>
        RowFilter.IsNull(name, negated = p.name() == "IS_NOT_NULL")
      }
    case "=" | "<=>" | "<>" | "<" | "<=" | ">" | ">=" if p.children().length == 2 => comparison(p)
    case "IN" if p.children().length >= 2 => inList(p, dropNulls = false)
    case "STARTS_WITH" | "ENDS_WITH" | "CONTAINS" if p.children().length == 2 =>
      for {
        (name, dt, domain) <- column(p, 0)
        if domain == Utf8Bytes
        FilterValue.BytesValue(pattern) <- literal(p.children()(1), dt, domain)
      } yield RowFilter.StringMatch(
        name,
        p.name() match {
          case "STARTS_WITH" => MatchKind.StartsWith
          case "ENDS_WITH" => MatchKind.EndsWith
          case _ => MatchKind.Contains
        },
        pattern,
        negated = false
      )
    case _ => None
  }

  /**
   * A runtime filter (dynamic pruning) as [[translate]] takes it, except that an IN list
   * drops its NULL values, which match no row (none left: no row passes).
   */
  def translateRuntime(p: Predicate): Option[RowFilter] = p.name() match {
    case "IN" if p.children().nonEmpty => inList(p, dropNulls = true)
    case _ => translate(p)
  }

  /**
   * `column IN (literals)`, the list walked once (a runtime filter can hold a million join
   * keys). A NULL value leaves the whole predicate to Spark unless `dropNulls`, which is exact
   * only where the list is never negated (a runtime filter); no value left passes no row.
   */
  private def inList(p: Predicate, dropNulls: Boolean): Option[RowFilter] =
    column(p, 0).flatMap { case (name, dt, domain) =>
      val children = p.children()
      val values = Vector.newBuilder[FilterValue]
      var i = 1
      var ok = true
      while (ok && i < children.length) {
        children(i) match {
          case l: Literal[_] if dropNulls && l.value() == null =>
          case e => literal(e, dt, domain) match {
              case Some(v) => values += v
              case None => ok = false
            }
        }
        i += 1
      }
      if (!ok) None
      else {
        val kept = values.result()
        Some(if (kept.isEmpty) RowFilter.Const(false)
        else RowFilter.In(name, kept, negated = false))
      }
    }

  /**
   * `name LIKE pattern` for a pattern whose only wildcard is `%` ([[MatchKind.Like]]), on a
   * string column the reader evaluates. Spark's V2 predicates carry no LIKE: [[LikePushDown]]
   * hands these over.
   */
  def like(name: String, pattern: String): Option[RowFilter] =
    columnRef(LanceScan.column(name)).collect { case (_, _, Utf8Bytes) =>
      RowFilter.StringMatch(
        name,
        MatchKind.Like,
        pattern.getBytes(java.nio.charset.StandardCharsets.UTF_8),
        negated = false
      )
    }

  /** Whether predicates on top-level column `name` can be evaluated by the reader. */
  def filterable(name: String): Boolean =
    columnRef(LanceScan.column(name)).isDefined

  /** `col op lit` or `lit op col` (flipped). */
  private def comparison(p: Predicate): Option[RowFilter] = {
    val op = p.name() match {
      case "=" | "<=>" => CompareOp.Eq
      case "<>" => CompareOp.NotEq
      case "<" => CompareOp.Lt
      case "<=" => CompareOp.LtEq
      case ">" => CompareOp.Gt
      case _ => CompareOp.GtEq
    }
    def build(colIdx: Int, litIdx: Int, o: CompareOp): Option[RowFilter] =
      remainder(p, colIdx, litIdx, o).orElse(for {
        (name, dt, domain) <- column(p, colIdx)
        v <- literal(p.children()(litIdx), dt, domain)
      } yield RowFilter.Compare(name, o, v))
    val cmp = build(0, 1, op).orElse(build(1, 0, flip(op)))
    // `null <=> lit` is FALSE, not UNKNOWN (for a column and for a remainder of one alike), so
    // its negation keeps null rows: spell the null test out for NOT to see.
    if (p.name() == "<=>")
      cmp.map(c => RowFilter.And(RowFilter.IsNull(c.columns.head, negated = true), c))
    else cmp
  }

  /**
   * `col % k <op> lit` on an integer column (Spark translates `%` only under ANSI mode, where
   * both operands and the result have the column's type).
   */
  private def remainder(p: Predicate, exprIdx: Int, litIdx: Int, op: CompareOp): Option[RowFilter] =
    p.children()(exprIdx) match {
      case e: GeneralScalarExpression if e.name() == "%" && e.children().length == 2 =>
        for {
          (name, dt, domain) <- columnRef(e.children()(0))
          if Set[DataType](ByteType, ShortType, IntegerType, LongType).contains(dt)
          FilterValue.LongValue(divisor) <- literal(e.children()(1), dt, domain)
          if divisor != 0
          FilterValue.LongValue(v) <- literal(p.children()(litIdx), dt, domain)
        } yield RowFilter.Remainder(name, divisor, op, v)
      case _ => None
    }

  private def flip(op: CompareOp): CompareOp = op match {
    case CompareOp.Lt => CompareOp.Gt
    case CompareOp.LtEq => CompareOp.GtEq
    case CompareOp.Gt => CompareOp.Lt
    case CompareOp.GtEq => CompareOp.LtEq
    case other => other
  }

  private def both(p: Predicate): Option[(RowFilter, RowFilter)] =
    for {
      l <- child(p, 0).flatMap(predicate).flatMap(translate)
      r <- child(p, 1).flatMap(predicate).flatMap(translate)
    } yield (l, r)

  private def child(p: Predicate, i: Int): Option[Expression] =
    if (p.children().length > i) Some(p.children()(i)) else None

  private def predicate(e: Expression): Option[Predicate] = e match {
    case p: Predicate => Some(p)
    case _ => None
  }

  /** A top-level column the evaluator reads: its name, Spark type and value domain. */
  private def column(p: Predicate, i: Int): Option[(String, DataType, FilterDomain)] =
    child(p, i).flatMap(columnRef)

  private def columnRef(e: Expression): Option[(String, DataType, FilterDomain)] =
    Some(e).collect {
      case r: NamedReference if r.fieldNames().length == 1 => r.fieldNames()(0)
    }.flatMap { name =>
      for {
        field <- schema.field(name)
        sf <- sparkSchema.fields.find(_.name == name)
        domain <- FilterDomain.of(field)
        if sparkTypeFits(field, sf.dataType, domain)
      } yield (name, sf.dataType, domain)
    }

  /** The Spark type must be the plain one the domain's values stand for (no rescaling). */
  private def sparkTypeFits(field: LanceField, dt: DataType, domain: FilterDomain): Boolean =
    (domain, dt) match {
      case (
            Integral(_, _),
            BooleanType | ByteType | ShortType | IntegerType | LongType | DateType | TimestampType | TimestampNTZType
          ) => true
      case (Floating(_), FloatType | DoubleType) => true
      case (Utf8Bytes, s: StringType) => s == StringType // the default UTF8_BINARY collation only
      case (Decimal128, d: DecimalType) => field.logicalType match {
          case LogicalType.Decimal(128, p, s) => p == d.precision && s == d.scale
          case _ => false
        }
      case _ => false
    }

  /** A non-null literal of exactly the column's Spark type, as a value of its domain. */
  private def literal(e: Expression, dt: DataType, domain: FilterDomain): Option[FilterValue] =
    e match {
      case l: Literal[_] if l.value() != null && l.dataType() == dt =>
        (domain, l.value()) match {
          case (Integral(_, _), b: java.lang.Boolean) =>
            Some(FilterValue.LongValue(if (b) 1L else 0L))
          case (Integral(_, _), n: java.lang.Byte) => Some(FilterValue.LongValue(n.longValue))
          case (Integral(_, _), n: java.lang.Short) => Some(FilterValue.LongValue(n.longValue))
          case (Integral(_, _), n: java.lang.Integer) => Some(FilterValue.LongValue(n.longValue))
          case (Integral(_, _), n: java.lang.Long) => Some(FilterValue.LongValue(n.longValue))
          case (Floating(_), f: java.lang.Float) => Some(FilterValue.DoubleValue(f.doubleValue))
          case (Floating(_), d: java.lang.Double) => Some(FilterValue.DoubleValue(d.doubleValue))
          case (Utf8Bytes, s: UTF8String) => Some(FilterValue.BytesValue(s.getBytes))
          case (Decimal128, d: Decimal) =>
            // The literal has the column's type: its unscaled value at the column's scale, which
            // must lie strictly inside a long (see FilterDomain.Decimal128).
            val scale = dt.asInstanceOf[DecimalType].scale
            val u = scala.util.Try(d.toJavaBigDecimal.setScale(scale).unscaledValue()).toOption
            u.filter(_.bitLength() < 63).map(x => FilterValue.LongValue(x.longValue()))
          case _ => None
        }
      case _ => None
    }
}
