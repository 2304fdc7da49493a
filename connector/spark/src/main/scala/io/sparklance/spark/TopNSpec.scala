package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{
  Ascending,
  BoundReference,
  Descending,
  NullsFirst,
  NullsLast,
  SortOrder
}
import org.apache.spark.sql.catalyst.expressions.codegen.LazilyGeneratedOrdering
import org.apache.spark.sql.connector.expressions.{
  NamedReference,
  NullOrdering,
  SortDirection,
  SortOrder => V2SortOrder
}
import org.apache.spark.sql.types._

/**
 * A TopN (`ORDER BY keys LIMIT n`) pushed into the scan: each task returns its own first `n`
 * rows in that order, and Spark's sort and limit on top pick the first `n` of all
 * ([[LanceTopNReader]]). Keys are top-level data columns of orderable atomic types, compared
 * by Spark's own ordering (NaN, nulls, collations as Spark sorts them).
 */
final case class TopNSpec(keys: Seq[TopNSpec.Key], limit: Int) {

  /** The key columns, each once, in the order they first appear. */
  def columns: Seq[String] = keys.map(_.column).distinct

  /**
   * Spark's ordering of rows whose first fields are [[columns]], of the types `schema` gives
   * them there.
   */
  def ordering(schema: StructType): Ordering[InternalRow] =
    new LazilyGeneratedOrdering(keys.map { k =>
      val i = columns.indexOf(k.column)
      SortOrder(
        BoundReference(i, schema(i).dataType, nullable = true),
        if (k.ascending) Ascending else Descending,
        if (k.nullsFirst) NullsFirst else NullsLast,
        Seq.empty
      )
    })

  /** As the scan's description shows it. */
  def describe: String = keys.map { k =>
    val direction = if (k.ascending) "ASC" else "DESC"
    s"${k.column} $direction NULLS ${if (k.nullsFirst) "FIRST" else "LAST"}"
  }.mkString("TopN: [", ", ", s"] Limit: $limit")
}

object TopNSpec {
  final case class Key(column: String, ascending: Boolean, nullsFirst: Boolean)

  /**
   * The most rows a task keeps. Past this the second pass decodes most batches anyway, and
   * each task would hold that many keys: Spark sorts the scan's rows itself instead.
   */
  val MaxRows = 10000

  /**
   * The TopN Spark asks for, when each key is a top-level column of `schema` (the table's
   * data columns) of a type the reader can order by, and `limit` is in 1 to [[MaxRows]].
   */
  def of(orders: Array[V2SortOrder], limit: Int, schema: StructType): Option[TopNSpec] =
    if (limit <= 0 || limit > MaxRows || orders.isEmpty) None
    else {
      val keys = orders.toSeq.map { o =>
        o.expression() match {
          case r: NamedReference
              if r.fieldNames().length == 1 &&
                schema.fieldNames.contains(r.fieldNames()(0)) &&
                orderable(schema(r.fieldNames()(0)).dataType) =>
            Some(Key(
              r.fieldNames()(0),
              o.direction() == SortDirection.ASCENDING,
              o.nullOrdering() == NullOrdering.NULLS_FIRST
            ))
          case _ => None
        }
      }
      if (keys.forall(_.isDefined)) Some(TopNSpec(keys.flatten, limit)) else None
    }

  private def orderable(t: DataType): Boolean = t match {
    case BooleanType | ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType |
        DateType | TimestampType | TimestampNTZType | BinaryType => true
    case _: DecimalType | _: StringType => true
    case _ => false
  }
}
