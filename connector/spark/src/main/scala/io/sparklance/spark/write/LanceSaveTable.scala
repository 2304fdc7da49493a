package io.sparklance.spark.write

import java.util

import org.apache.spark.sql.connector.catalog.{SupportsWrite, Table, TableCapability}
import org.apache.spark.sql.connector.write.{LogicalWriteInfo, WriteBuilder}
import org.apache.spark.sql.types.StructType

import io.sparklance.spark.LanceTable

/**
 * A dataset path as the target of `df.write.format("lance").save(path)` (see [[LanceSave]]).
 *
 * `fitted`: the table has the dataset's schema and Spark fits the DataFrame to it (by name,
 * with `spark.sql.storeAssignmentPolicy`'s casts), as for `writeTo` and `INSERT`: an append or
 * a `replaceWhere` overwrite of an existing dataset. Otherwise it accepts any schema: a new
 * dataset, an overwrite (which replaces the schema), or an append with `mergeSchema`.
 */
class LanceSaveTable(
    path: String,
    schema0: StructType,
    options: Map[String, String],
    intent: WriteIntent,
    fitted: Boolean
) extends Table with SupportsWrite {
  override def name(): String = LanceTable.nameOf(path)
  override def schema(): StructType = schema0

  override def capabilities(): util.Set[TableCapability] = {
    val caps = util.EnumSet.of(
      TableCapability.BATCH_WRITE,
      TableCapability.TRUNCATE,
      TableCapability.OVERWRITE_BY_FILTER
    )
    if (!fitted) caps.add(TableCapability.ACCEPT_ANY_SCHEMA)
    caps
  }

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new LanceWriteBuilder(info, options, intent = intent)
}
