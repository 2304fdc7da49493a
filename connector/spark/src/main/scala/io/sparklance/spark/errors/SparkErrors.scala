package io.sparklance.spark.errors

import io.sparklance.{
  LanceException,
  LanceInvalidOptionException,
  LanceNotFoundException,
  LanceSchemaMismatchException,
  LanceUnknownOptionException
}

/**
 * The connector's errors as the exceptions a Spark user catches, at the places Spark calls
 * into the connector to resolve and plan a read or write:
 *
 * | connector error | Spark exception | error class | SQLSTATE |
 * | --- | --- | --- | --- |
 * | path, dataset, version or tag not found | `AnalysisException` | `LANCE_NOT_FOUND` | 42K03 |
 * | unknown option, or another format's | `AnalysisException` | `LANCE_UNKNOWN_OPTION` | 42K06 |
 * | DataFrame does not fit the dataset | `AnalysisException` | `LANCE_SCHEMA_MISMATCH` | 42K09 |
 * | bad option value | `IllegalArgumentException` | | |
 *
 * Anything else passes unchanged.
 */
object SparkErrors {
  def toSpark(e: Throwable): Throwable = e match {
    case n: LanceNotFoundException => analysis(n, "LANCE_NOT_FOUND", "42K03")
    case u: LanceUnknownOptionException => analysis(u, "LANCE_UNKNOWN_OPTION", "42K06")
    case s: LanceSchemaMismatchException => analysis(s, "LANCE_SCHEMA_MISMATCH", "42K09")
    case i: LanceInvalidOptionException => new IllegalArgumentException(i.getMessage, i)
    case other => other
  }

  /** Runs `body`, rethrowing connector errors as Spark's (see [[toSpark]]). */
  def spark[T](body: => T): T =
    try body
    catch { case e: LanceException => throw toSpark(e) }

  private def analysis(e: LanceException, errorClass: String, sqlState: String) =
    new LanceAnalysisException(e.getMessage, errorClass, sqlState, e)
}
