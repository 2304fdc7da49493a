package io.sparklance.spark

import java.util

import org.apache.spark.sql.connector.catalog.{StagedTable, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType

import io.sparklance.spark.write.LanceWriteBuilder

/**
 * A table CREATE/REPLACE TABLE ... AS SELECT is about to write: the write itself creates
 * (failing if a dataset appeared meanwhile) or replaces the dataset in one commit, so there
 * is nothing left to publish afterwards — a failed write committed nothing; `onAbort` undoes
 * what the catalog recorded for a table being created.
 */
class LanceStagedTable(tableName: String, path: String, schema0: StructType,
    writeOptions: Map[String, String], replace: Boolean, onAbort: () => Unit = () => ())
  extends StagedTable with SupportsWrite {

  override def name(): String = tableName
  override def schema(): StructType = schema0
  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new LanceWriteBuilder(info, writeOptions, replace)

  override def commitStagedChanges(): Unit = ()
  override def abortStagedChanges(): Unit = onAbort()
}
