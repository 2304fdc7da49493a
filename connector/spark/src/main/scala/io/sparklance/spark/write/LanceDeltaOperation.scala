package io.sparklance.spark.write

import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.spark.{LanceMetadataColumns, LanceScanBuilder, LanceTable}

/**
 * DELETE, UPDATE and MERGE INTO on a Lance table, merge-on-read (Spark's delta-based
 * row-level operations): Spark scans the table version with `_rowaddr` (the row id Spark
 * keys changes by) and `_rowid` (kept by rewritten rows), and hands each task the rows to
 * delete, update or insert ([[LanceDeltaWriter]]); the driver commits one Lance transaction:
 * a Delete when rows were only removed, else an Update (removed rows through deletion
 * files, rewritten and inserted rows in new fragments), as pylance's delete, update and
 * merge_insert commit them. Concurrent changes to the same fragments conflict as pylance's
 * rules say; the statement then fails and can be re-run.
 */
class LanceDeltaOperation(
    table: LanceTable,
    cmd: RowLevelOperation.Command,
    tableOptions: Map[String, String]
) extends SupportsDelta {

  override def command(): RowLevelOperation.Command = cmd

  override def description(): String = s"Lance ${cmd.name()} on ${table.snapshot.root}"

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    new LanceScanBuilder(table)

  override def rowId(): Array[NamedReference] =
    Array(Expressions.column(LanceMetadataColumns.RowAddr.name))

  override def requiredMetadataAttributes(): Array[NamedReference] =
    Array(Expressions.column(LanceMetadataColumns.RowId.name))

  override def newWriteBuilder(info: LogicalWriteInfo): DeltaWriteBuilder =
    new DeltaWriteBuilder {
      override def build(): DeltaWrite = new DeltaWrite {
        override def toBatch: DeltaBatchWrite = LanceDeltaBatchWrite.plan(table, cmd, tableOptions)
        override def description(): String = LanceDeltaOperation.this.description()
      }
    }
}
