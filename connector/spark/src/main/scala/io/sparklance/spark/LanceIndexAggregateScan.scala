package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.NamedReference
import org.apache.spark.sql.connector.expressions.aggregate.{
  AggregateFunc,
  Aggregation,
  CountStar,
  Max,
  Min
}
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector
import org.apache.spark.sql.types.{LongType, StructField, StructType}
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import io.sparklance.table.RowCounts
import io.sparklance.table.index.IndexAggregates

/**
 * MIN, MAX and COUNT(*) of a whole table version answered on the driver, with no data file
 * read: MIN and MAX from BTREE indices that cover every fragment (see IndexAggregates), the
 * count from the manifest. One row, in the order of the aggregation.
 */
class LanceIndexAggregateScan(table: LanceTable, schema: StructType, protected val row: InternalRow)
    extends LanceDriverScan(table, schema, "LanceIndexAggregateScan", "from indices and metadata") {
  override protected def detail: String = s" [${schema.fieldNames.mkString(", ")}]"
}

object LanceIndexAggregateScan {

  /**
   * The scan answering `aggregation` over the whole of `table` (no filter, no grouping), or
   * None when an aggregate is not a COUNT(*), MIN or MAX of a top-level column, or no index
   * answers it.
   */
  def answer(table: LanceTable, aggregation: Aggregation): Option[LanceIndexAggregateScan] = {
    val aggs = aggregation.aggregateExpressions().toSeq
    if (!aggregation.groupByExpressions().isEmpty || aggs.isEmpty) return None
    val values = aggs.map(value(table, _))
    if (values.exists(_.isEmpty)) return None
    val schema = StructType(aggs.zip(values).zipWithIndex.map { case ((a, v), i) =>
      StructField(s"agg$i", v.get._1, nullable = true)
    })
    Some(new LanceIndexAggregateScan(table, schema, InternalRow.fromSeq(values.map(_.get._2))))
  }

  /** One aggregate's Spark type and value. */
  private def value(
      table: LanceTable,
      a: AggregateFunc
  ): Option[(org.apache.spark.sql.types.DataType, Any)] = a match {
    case _: CountStar => Some(LongType -> RowCounts.count(table.io, table.snapshot))
    case m: Min => extreme(table, m.column(), max = false)
    case m: Max => extreme(table, m.column(), max = true)
    case _ => None
  }

  private def extreme(
      table: LanceTable,
      e: org.apache.spark.sql.connector.expressions.Expression,
      max: Boolean
  ): Option[(org.apache.spark.sql.types.DataType, Any)] = e match {
    case r: NamedReference if r.fieldNames().length == 1 =>
      val name = r.fieldNames()(0)
      for {
        field <- table.snapshot.schema.field(name)
        sparkField <- table.schema().fields.find(_.name == name)
        found <- IndexAggregates.extreme(table.io, table.snapshot, name, max)
      } yield sparkField.dataType -> found.map { one =>
        val v = new OnHeapColumnVector(1, sparkField.dataType)
        try {
          ColumnVectorWriter.write(v, field, one)
          // A copy: the value must outlive the vector (strings point into it).
          new ColumnarBatch(Array[ColumnVector](v), 1).getRow(0).copy()
            .get(0, sparkField.dataType)
        } finally v.close()
      }.orNull
    case _ => None
  }
}
