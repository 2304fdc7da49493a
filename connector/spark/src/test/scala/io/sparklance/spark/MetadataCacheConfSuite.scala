package io.sparklance.spark

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceInvalidOptionException

/** `spark.lance.metadataCacheSize`: Spark's size strings, and clear errors for others. */
class MetadataCacheConfSuite extends AnyFunSuite {
  test("sizes are read as Spark reads byte sizes") {
    assert(MetadataCacheConf.parse("0") == 0L)
    assert(MetadataCacheConf.parse("4096") == 4096L)
    assert(MetadataCacheConf.parse(" 128m ") == (128L << 20))
    assert(MetadataCacheConf.parse("2g") == (2L << 30))
    assert(MetadataCacheConf.parse("64k") == (64L << 10))
  }

  test("a value that is no size names the setting and the value") {
    Seq("lots", "12q", "-5m", "").foreach { v =>
      val e = intercept[LanceInvalidOptionException](MetadataCacheConf.parse(v))
      assert(
        e.getMessage.contains(MetadataCacheConf.Key) && e.getMessage.contains(s"'$v'"),
        e.getMessage
      )
    }
  }
}
