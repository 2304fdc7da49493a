package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.{Literal, NamedReference}
import org.apache.spark.sql.connector.expressions.filter.Predicate

/**
 * Which fragments a predicate on the metadata columns `_fragid` and `_rowaddr` can match:
 * a scan reads only those. Pruning is conservative (a fragment is skipped only when no row
 * of it can match) and Spark still evaluates the predicate, so the result is exact whatever
 * is pruned. A row address is `fragment id << 32 | offset`, so a bound on `_rowaddr` bounds
 * the fragment id by its upper 32 bits.
 */
object FragmentPruning {

  /** A test on fragment ids, or None when `p` says nothing about them. */
  def of(p: Predicate): Option[Long => Boolean] = p.name() match {
    case "AND" =>
      (sub(p, 0).flatMap(of), sub(p, 1).flatMap(of)) match {
        case (Some(a), Some(b)) => Some(id => a(id) && b(id))
        case (a, b) => a.orElse(b)
      }
    case "OR" =>
      for (a <- sub(p, 0).flatMap(of); b <- sub(p, 1).flatMap(of))
        yield (id: Long) => a(id) || b(id)
    case "=" | "<=>" | "<" | "<=" | ">" | ">=" if p.children().length == 2 => comparison(p)
    case "IN" if p.children().length >= 2 =>
      for {
        col <- column(p, 0)
        values <- sequence(p.children().toSeq.drop(1).map(literal))
        if col == "_fragid" || values.forall(_ >= 0)
      } yield {
        val ids = values.map(fragmentOf(col, _)).toSet
        (id: Long) => ids.contains(id)
      }
    case _ => None
  }

  /** `col op lit`, or `lit op col` flipped. */
  private def comparison(p: Predicate): Option[Long => Boolean] = {
    val flipped = column(p, 0).isEmpty
    val (ci, li) = if (flipped) (1, 0) else (0, 1)
    val op = (p.name(), flipped) match {
      case ("<", true) => ">"
      case ("<=", true) => ">="
      case (">", true) => "<"
      case (">=", true) => "<="
      case (o, _) => o
    }
    // Row addresses are never negative: a negative bound says nothing to prune by.
    for (col <- column(p, ci); v <- literal(p.children()(li)) if col == "_fragid" || v >= 0)
      yield {
        val f = fragmentOf(col, v)
        op match {
          case "=" | "<=>" => (id: Long) => id == f
          // Row addresses: `_rowaddr < v` can still match rows of fragment `v >>> 32`.
          case "<" if col == "_fragid" => (id: Long) => id < f
          case "<" | "<=" => (id: Long) => id <= f
          case ">" if col == "_fragid" => (id: Long) => id > f
          case _ => (id: Long) => id >= f
        }
      }
  }

  private def fragmentOf(col: String, v: Long): Long = if (col == "_fragid") v else v >>> 32

  private[spark] def sub(p: Predicate, i: Int): Option[Predicate] = p.children()(i) match {
    case q: Predicate => Some(q)
    case _ => None
  }

  private def column(p: Predicate, i: Int): Option[String] = p.children()(i) match {
    case r: NamedReference
        if r.fieldNames().length == 1 &&
          (r.fieldNames()(0) == "_fragid" || r.fieldNames()(0) == "_rowaddr") =>
      Some(r.fieldNames()(0))
    case _ => None
  }

  private[spark] def literal(
      e: org.apache.spark.sql.connector.expressions.Expression
  ): Option[Long] =
    e match {
      case l: Literal[_] => l.value() match {
          case i: java.lang.Integer => Some(i.longValue())
          case x: java.lang.Long => Some(x.longValue())
          case _ => None
        }
      case _ => None
    }

  private def sequence[A](xs: Seq[Option[A]]): Option[Seq[A]] =
    if (xs.forall(_.isDefined)) Some(xs.map(_.get)) else None
}
