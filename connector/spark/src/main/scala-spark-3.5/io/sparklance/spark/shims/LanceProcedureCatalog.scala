package io.sparklance.spark.shims

/**
 * Spark 3.5 has no procedure API (`CALL` came with Spark 4): the Lance catalog offers its
 * procedures there through the Python helpers (`spark_lance.compact_files`, ...) only.
 */
trait LanceProcedureCatalog {
  /** The dataset path of a procedure's `table` argument (a path, or a table name). */
  protected def procedureTablePath(table: String): String
}
