package io.sparklance.spark

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types.{LongType, StructField, StructType}

import io.sparklance.table.RowCounts

/**
 * COUNT(*) from the manifest: physical rows minus deleted rows of every fragment, with no
 * data file opened (except for manifests of old Lance releases that did not record counts).
 */
class LanceCountScan(table: LanceTable) extends LanceDriverScan(
      table,
      StructType(Seq(StructField("count(*)", LongType, nullable = false))),
      "LanceCountScan",
      "from metadata"
    ) {
  private lazy val count = RowCounts.count(table.io, table.snapshot)

  protected def row: InternalRow = InternalRow(count)
}
