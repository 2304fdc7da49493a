package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.LocalScan
import org.apache.spark.sql.types.StructType

/**
 * A scan of one table version answered on the driver with no data file read (see
 * [[LanceCountScan]], [[LanceIndexAggregateScan]]): one row of `schema`. Described as
 * `<kind> <table><detail> (<source>)`, `source` saying where the values come from.
 */
abstract class LanceDriverScan(table: LanceTable, schema: StructType, kind: String, source: String)
    extends LocalScan {

  /** The one row (computed when Spark asks for the rows). */
  protected def row: InternalRow

  /** What the description shows after the table name; nothing by default. */
  protected def detail: String = ""

  override def readSchema(): StructType = schema
  override def rows(): Array[InternalRow] = Array(row)
  override def description(): String = s"$kind ${table.name()}$detail ($source)"
}
