package io.sparklance.spark

import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.filter.Predicate
import org.roaringbitmap.RoaringBitmap

import io.sparklance.table.index.IndexPruning.Candidates

/**
 * The rows predicates on `_rowaddr` name exactly (`_rowaddr = a`, `_rowaddr IN (a, b, …)`,
 * and ANDs and ORs of them), by fragment: a scan reads only those fragments, plans only the
 * splits holding them and decodes only the batches holding them — what fetching rows found
 * by a search (nearest neighbours, a join on addresses) needs. Like [[FragmentPruning]] it
 * only narrows what is read: Spark still evaluates the predicates.
 */
object RowAddressPruning {
  import FragmentPruning.{literal, sub}

  /** A cap on the addresses one scan collects (a larger IN list is left to Spark). */
  private val MaxAddresses = 1 << 20

  /** The rows the conjunction of `predicates` can match, if they name them. */
  def of(predicates: Seq[Predicate]): Option[Candidates] =
    predicates.flatMap(addresses).reduceOption((a, b) => a.intersect(b)).map(byFragment)

  private def addresses(p: Predicate): Option[Set[Long]] = p.name() match {
    case "AND" =>
      (sub(p, 0).flatMap(addresses), sub(p, 1).flatMap(addresses)) match {
        case (Some(a), Some(b)) => Some(a.intersect(b))
        case (a, b) => a.orElse(b)
      }
    case "OR" =>
      for (
        a <- sub(p, 0).flatMap(addresses); b <- sub(p, 1).flatMap(addresses)
        if a.size + b.size <= MaxAddresses
      ) yield a ++ b
    case "=" | "<=>" if p.children().length == 2 =>
      (isAddress(p, 0), isAddress(p, 1)) match {
        case (true, _) => literal(p.children()(1)).map(v => Set(v).filter(valid))
        case (_, true) => literal(p.children()(0)).map(v => Set(v).filter(valid))
        case _ => None
      }
    case "IN"
        if p.children().length >= 2 && p.children().length <= MaxAddresses &&
          isAddress(p, 0) =>
      val values = p.children().toSeq.drop(1).map(literal)
      if (values.forall(_.isDefined)) Some(values.map(_.get).filter(valid).toSet) else None
    case _ => None
  }

  /** An address names a row when its offset fits a bitmap (every real one does). */
  private def valid(a: Long): Boolean = a >= 0 && (a & 0xffffffffL) <= Int.MaxValue

  private def byFragment(addresses: Set[Long]): Candidates =
    addresses.groupBy(_ >>> 32).map { case (frag, as) =>
      val rows = new RoaringBitmap()
      as.foreach(a => rows.add((a & 0xffffffffL).toInt))
      frag -> Some(rows)
    }

  private def isAddress(p: Predicate, i: Int): Boolean = p.children()(i) match {
    case r: NamedReference => r.fieldNames().toSeq == Seq("_rowaddr")
    case _ => false
  }
}
