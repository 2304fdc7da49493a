package io.sparklance.format

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceCorruptFileException
import io.sparklance.format.LogicalType._
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, VersionSpec}
import io.sparklance.testutil.Fixtures

class LogicalTypeSuite extends AnyFunSuite {

  test("every logical type pylance wrote in the fixtures parses and prints back unchanged") {
    val io = HadoopFileIO.local()
    val seen = Fixtures.all.flatMap { f =>
      val ds = LanceDataset.open(io, f.path.toString)
      ds.versions().flatMap(v =>
        ds.open(VersionSpec.Number(v.version)).manifest.getFieldsList.asScala.map(_.getLogicalType)
      )
    }.distinct
    assert(seen.size > 30, seen)
    seen.foreach(t => assert(LogicalType.parse(t).text == t, t))
  }

  test("compound grammar") {
    assert(parse("timestamp:ms:+05:00") == Timestamp(TimeUnit.Milli, Some("+05:00")))
    assert(parse("timestamp:ns:-") == Timestamp(TimeUnit.Nano, None))
    assert(parse("timestamp:us:America/New_York") == Timestamp(
      TimeUnit.Micro,
      Some("America/New_York")
    ))
    assert(parse("fixed_size_list:fixed_size_list:int32:3:2") == FixedSizeList(
      FixedSizeList(Int32, 3),
      2
    ))
    assert(parse("fixed_size_list:lance.bfloat16:8") == FixedSizeList(BFloat16, 8))
    assert(parse("dict:string:int8:false") == Dictionary(Utf8, Int8, ordered = false))
    assert(parse("decimal:256:50:-3") == Decimal(256, 50, -3))
    assert(parse("time32:ms") == Time(TimeUnit.Milli))
    assert(parse("time64:ns") == Time(TimeUnit.Nano))
    assert(parse("large_list.struct") == ListOfStruct(large = true))
    Seq(
      "timestamp:ms:+05:00",
      "fixed_size_list:fixed_size_list:int32:3:2",
      "decimal:128:38:10",
      "duration:s",
      "date64:ms"
    )
      .foreach(t => assert(parse(t).text == t))
  }

  test("malformed types are clean errors that quote the type") {
    Seq(
      "",
      "int33",
      "time32:us",
      "timestamp:xs:-",
      "decimal:64:1:1",
      "fixed_size_list:float:x",
      "fixed_size_binary:",
      "dict:string:int8",
      "decimal:128:a:b"
    ).foreach { t =>
      val e = intercept[LanceCorruptFileException](parse(t))
      assert(e.getMessage.contains(s"'$t'"), e.getMessage)
    }
  }
}
