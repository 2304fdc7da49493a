package io.sparklance.spark

import org.apache.spark.sql.types.StructType

import io.sparklance.LanceErrors
import io.sparklance.format.writer.FileVersion
import io.sparklance.storage.FileIO
import io.sparklance.spark.write.{LanceWriteOptions, SparkToLance}
import io.sparklance.table.PrimaryKey
import io.sparklance.table.txn.{CommitOptions, WritePlan}

/**
 * A table's schema committed without rows, from its CREATE/REPLACE TABLE properties (file
 * format version, column encodings, stable row ids, table config): CREATE TABLE makes version 1
 * with no fragments, as pylance writes an empty table; REPLACE TABLE without AS SELECT commits
 * an Overwrite with no fragments on the existing dataset, whose history stays.
 */
private[spark] object EmptyTableWrite {

  /**
   * @param table    the table's name, for errors
   * @param create   true: the dataset must not exist yet (a concurrent creator makes the commit
   *                 fail); false: it replaces the dataset's latest version
   */
  def apply(
      io: FileIO,
      path: String,
      table: String,
      schema: StructType,
      properties: Map[String, String],
      create: Boolean
  ): Unit = {
    val options = LanceTableChanges.createOptions(properties)
    val requested = options.get(LanceWriteOptions.DataStorageVersion).map { v =>
      FileVersion.parse(v).getOrElse(throw LanceErrors.invalidOption(
        LanceWriteOptions.DataStorageVersion,
        v,
        "expected 2.0, 2.1, 2.2 or stable"
      ))
    }
    val existing = if (create) None else WritePlan.existing(io, path)
    val fields = PrimaryKey.mark(
      path,
      SparkToLance.fields(
        ColumnEncodingProperties.applyTo(schema, options, table),
        WritePlan.replaceVersion(path, existing, requested)
      ),
      options.get(LanceWriteOptions.PrimaryKey).toSeq.flatMap(LanceTableChanges.keyColumns)
    )
    val stable = options.get(LanceWriteOptions.EnableStableRowIds)
      .exists(_.trim.equalsIgnoreCase("true"))
    WritePlan.replace(
      path,
      existing,
      fields,
      requested,
      mustCreate = create,
      LanceTableChanges.configOf(properties)
    )
      .commit(io, Nil, CommitOptions(enableStableRowIds = stable))
  }
}
