package io.sparklance.spark.errors

import org.apache.spark.sql.AnalysisException

/**
 * A connector error found while Spark analyses or plans a query (a missing path, a directory
 * that is not a Lance dataset, an unknown option, version or tag, a DataFrame that does not fit
 * the dataset), as Spark's own `AnalysisException`: PySpark raises it as
 * `pyspark.errors.AnalysisException`, and `getCondition`/`getErrorClass` and `getSqlState`
 * say what it is. The message is the connector's, unchanged.
 */
final class LanceAnalysisException(
    message: String,
    errorClass: String,
    sqlState: String,
    cause: Throwable
) extends AnalysisException(
      message,
      None,
      None,
      Option(cause),
      Some(errorClass),
      Map.empty,
      Array.empty
    ) {
  override def getSqlState: String = sqlState
}
