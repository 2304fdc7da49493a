package io.sparklance.spark

import org.apache.spark.sql.SparkSession
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** Base of suites that need Spark: one local session for the whole suite. */
abstract class SparkSessionSuite extends AnyFunSuite with BeforeAndAfterAll {
  protected lazy val spark: SparkSession = SparkSession.builder()
    .master("local[2]")
    .appName(getClass.getSimpleName)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()

  override protected def afterAll(): Unit = {
    try spark.stop()
    finally super.afterAll()
  }
}
