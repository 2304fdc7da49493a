package io.sparklance.spark

import java.util

import org.apache.spark.sql.connector.catalog.{StagedTable, SupportsWrite, TableCapability}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType

import io.sparklance.spark.write.{LanceWriteBuilder, WriteIntent}

/**
 * A table CREATE/REPLACE TABLE is about to make. With AS SELECT, the write itself creates
 * (failing if a dataset appeared meanwhile) or replaces the dataset in one commit, so there
 * is nothing left to publish afterwards. Without it (`REPLACE TABLE t (...)`), nothing is
 * written and `commitStagedChanges` commits the schema alone (`commitEmpty`). A failed
 * statement committed nothing; `onAbort` undoes what the catalog recorded of a new table.
 */
class LanceStagedTable(
    tableName: String,
    schema0: StructType,
    writeOptions: Map[String, String],
    intent: WriteIntent,
    replace: Boolean,
    commitEmpty: () => Unit,
    onAbort: () => Unit = () => ()
) extends StagedTable with SupportsWrite {

  @volatile private var written = false

  override def name(): String = tableName
  override def schema(): StructType = schema0
  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.TRUNCATE)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder = {
    written = true
    new LanceWriteBuilder(info, writeOptions, replace, intent)
  }

  override def commitStagedChanges(): Unit = if (!written) commitEmpty()
  override def abortStagedChanges(): Unit = onAbort()
}

object LanceStagedTable {

  /** The options of the staged write to `path`: the catalog's storage options, the table's
   *  OPTIONS. */
  def writeOptions(
      base: Map[String, String],
      properties: Map[String, String],
      path: String
  ): Map[String, String] =
    base ++ LanceTableChanges.createOptions(properties) + ("path" -> path)

  /** The staged write's intent: the TBLPROPERTIES as table config; a create fails if a
   *  dataset exists at the path. */
  def intent(properties: Map[String, String], replace: Boolean): WriteIntent =
    WriteIntent(createOnly = !replace, tableConfig = LanceTableChanges.configOf(properties))
}
