package io.sparklance.spark

import scala.jdk.CollectionConverters._

import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, VersionSpec}
import io.sparklance.testutil.{CanonicalJson, Fixture, Fixtures}

/**
 * Every fixture, every version, read through Spark, equals pylance's `to_table()` value by
 * value and in the same order (manifest fragment order).
 */
class ScanConformanceSuite extends SparkSessionSuite {
  private val io = HadoopFileIO.local()

  override protected def beforeAll(): Unit = {
    super.beforeAll()
    spark.conf.set("spark.sql.datetime.java8API.enabled", "true")
  }

  private def check(f: Fixture): Unit = f.versions.foreach { v =>
    val fields =
      LanceDataset.open(io, f.path.toString).open(VersionSpec.Number(v.version)).schema.fields
    // Small batches and partitions, so batch, page and partition edges are all crossed.
    val rows = spark.read.format("lance").option("version", v.version).option("batch_size", 100)
      .option("split_size", 4096).load(f.path.toString).collect()
    val expected = v.rows
    assert(rows.length == expected.length, s"$v: row count")
    rows.zip(expected).zipWithIndex.foreach { case ((r, e), i) =>
      val actual = SparkRowJson.row(fields, r)
      fields.foreach { fld =>
        val want = e.get(fld.name)
        assert(
          CanonicalJson.same(want, actual(fld.name)),
          s"$v row $i column '${fld.name}' (${fld.logicalType.text}): pylance $want, Spark ${actual(fld.name)}"
        )
      }
    }
  }

  for (format <- Seq("legacy", "2.0", "2.1", "2.2")) {
    test(s"file format $format: every fixture and version reads as pylance reads it") {
      val fs = Fixtures.all.filter(f => !f.external && f.format == format)
      assert(fs.nonEmpty)
      fs.foreach(check)
    }
  }

  test("external datasets written by old Lance releases read as pylance reads them") {
    val fs = Fixtures.all.filter(_.external)
    assert(fs.nonEmpty, "no external fixtures under src-test-data/external")
    fs.foreach(check)
  }
}
