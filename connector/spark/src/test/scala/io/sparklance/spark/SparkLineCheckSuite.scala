package io.sparklance.spark

import java.util.Properties
import java.util.ServiceLoader

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.sources.DataSourceRegister
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceException
import io.sparklance.spark.shims.SparkLineShims

/** The jar knows its line, accepts the Spark it runs in and refuses another with a message. */
class SparkLineCheckSuite extends AnyFunSuite {
  private val build = {
    val p = new Properties()
    val in = getClass.getResourceAsStream("/io/sparklance/build.properties")
    assert(in != null, "build.properties is missing from the classpath")
    try p.load(in)
    finally in.close()
    p
  }
  private val line = build.getProperty("spark.line")
  private val scalaBinary = build.getProperty("scala.binary")

  test("build.properties names the line, its Spark, the lines served and the Scala version") {
    assert(line == SparkLineShims.Line)
    assert(org.apache.spark.SPARK_VERSION.startsWith(build.getProperty("spark.version").take(4)))
    assert(build.getProperty("spark.lines.served").split(",").contains(line))
    assert(
      scalaBinary == scala.util.Properties.versionNumberString.split('.').take(2).mkString(".")
    )
    assert(build.getProperty("version").nonEmpty)
  }

  test("the running Spark and Scala pass the check") {
    assert(SparkLineCheck.check(
      org.apache.spark.SPARK_VERSION,
      scala.util.Properties.versionNumberString
    ) == "")
    SparkLineCheck.require()
  }

  test("every line the jar serves passes; another line or Scala is refused naming both") {
    val served = build.getProperty("spark.lines.served").split(",").toSeq
    served.foreach(l => assert(SparkLineCheck.check(s"$l.7", s"$scalaBinary.3") == "", l))
    val other = if (line == "3.5") "4.1.0" else "3.5.9"
    val msg = SparkLineCheck.check(other, s"$scalaBinary.3")
    assert(msg.contains(s"spark-lance-${line}_$scalaBinary-") && msg.contains(s"Spark $other"), msg)
    val wanted = if (other.startsWith("4.")) "spark-lance-4.0_" else "spark-lance-3.5_"
    assert(msg.contains(wanted), msg)
    val otherScala = if (scalaBinary == "2.12") "2.13.16" else "2.12.18"
    val scalaMsg = SparkLineCheck.check(served.head + ".0", otherScala)
    assert(
      scalaMsg.contains(s"Scala $otherScala") && scalaMsg.contains(s"Scala $scalaBinary"),
      scalaMsg
    )
  }

  test("the registered data source is the Java entry point and constructs with no checks") {
    val found = ServiceLoader.load(classOf[DataSourceRegister]).asScala
      .filter(_.shortName() == "lance").toSeq
    assert(found.map(_.getClass) == Seq(classOf[LanceDataSource]))
    assert(!classOf[LanceDataSource].getSuperclass.getName.startsWith("scala."))
  }

  test("features that need Spark 4 are refused on 3.5, naming the running Spark") {
    if (line == "3.5") {
      val e = intercept[LanceException](SparkLineShims.requireSpark4("CALL procedures"))
      assert(
        e.getMessage.contains("CALL procedures") &&
          e.getMessage.contains(org.apache.spark.SPARK_VERSION),
        e.getMessage
      )
    } else SparkLineShims.requireSpark4("CALL procedures")
  }
}
