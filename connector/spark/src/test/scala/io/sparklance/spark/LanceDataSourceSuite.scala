package io.sparklance.spark

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.types._

import io.sparklance.testutil.{Fixtures, TempDirs}

class LanceDataSourceSuite extends SparkSessionSuite {

  /**
   * Spark's type for a field as pylance reported it (the fixtures' `typeinfo`), by the
   * README's mapping table; an independent statement of the mapping SchemaConverter implements.
   */
  private def expectedType(f: JsonNode): DataType = typeOf(f.get("typeinfo"), f)

  private def typeOf(ti: JsonNode, f: JsonNode): DataType = {
    def kids = f.get("children").elements().asScala.toSeq
    ti.get("kind").asText() match {
      case "null" => NullType
      case "bool" => BooleanType
      case "int" =>
        (ti.get("bit_width").asInt(), ti.get("signed").asBoolean()) match {
          case (8, true) => ByteType
          case (16, true) | (8, false) => ShortType
          case (32, true) | (16, false) => IntegerType
          case (64, true) | (32, false) => LongType
          case (64, false) => DecimalType(20, 0)
        }
      case "float" => if (ti.get("bit_width").asInt() == 64) DoubleType else FloatType
      case "decimal" => DecimalType(ti.get("precision").asInt(), ti.get("scale").asInt())
      case "string" | "large_string" => StringType
      case "binary" | "large_binary" | "fixed_size_binary" => BinaryType
      case "date" => DateType
      case "timestamp" =>
        if (ti.get("unit").asText() == "ns") LongType
        else if (ti.hasNonNull("tz")) TimestampType
        else TimestampNTZType
      case "list" | "large_list" | "fixed_size_list" =>
        val item = kids.head
        ArrayType(expectedType(item), item.get("nullable").asBoolean())
      case "struct" => StructType(kids.map(expectedField))
      case "map" =>
        val Seq(k, v) = kids.head.get("children").elements().asScala.toSeq
        MapType(expectedType(k), expectedType(v), v.get("nullable").asBoolean())
      case "dictionary" => typeOf(ti.get("value"), f)
      case other => fail(s"fixture type kind $other has no mapping in this test")
    }
  }

  private def expectedField(f: JsonNode): StructField =
    StructField(f.get("name").asText(), expectedType(f), f.get("nullable").asBoolean())

  private def stripMetadata(t: DataType): DataType = t match {
    case s: StructType => StructType(s.fields.map(f =>
        f.copy(dataType = stripMetadata(f.dataType), metadata = Metadata.empty)
      ))
    case a: ArrayType => a.copy(elementType = stripMetadata(a.elementType))
    case m: MapType =>
      m.copy(keyType = stripMetadata(m.keyType), valueType = stripMetadata(m.valueType))
    case other => other
  }

  test("schema and count() of every version of every fixture match pylance") {
    Fixtures.all.foreach { f =>
      f.versions.foreach { v =>
        val df = spark.read.format("lance").option("version", v.version).load(f.path.toString)
        val expected = StructType(v.schema.elements().asScala.toSeq.map(expectedField))
        assert(
          stripMetadata(df.schema) == expected,
          s"$v:\n${df.schema.treeString}\nvs\n${expected.treeString}"
        )
        assert(df.count() == v.countRows, v.toString)
      }
    }
  }

  test("count() is answered from metadata: the plan has no Lance data scan") {
    val f = Fixtures("deletions_bitmap_2.2")
    val df = spark.read.format("lance").load(f.path.toString)
    val plan = df.groupBy().count().queryExecution.executedPlan.toString
    assert(plan.contains("LocalTableScan"), plan)
    assert(!plan.contains("LanceScan "), plan)
  }

  test("version accepts a tag name; tag, timestamp options select what pylance selects") {
    val f = Fixtures("multifrag_2.2")
    f.tags.foreach { case (tag, v) =>
      val expected = f.version(v).countRows
      assert(
        spark.read.format("lance").option("version", tag).load(f.path.toString).count() == expected
      )
      assert(
        spark.read.format("lance").option("tag", tag).load(f.path.toString).count() == expected
      )
    }
    f.versions.foreach { v =>
      val iso = java.time.Instant.ofEpochSecond(0, v.timestampMicros * 1000).toString
      assert(
        spark.read.format("lance").option("timestamp", iso).load(
          f.path.toString
        ).count() == v.countRows,
        iso
      )
    }
  }

  test("metadata tables list versions and tags") {
    val f = Fixtures("multifrag_2.2")
    val versions =
      spark.read.format("lance").option("metadata_table", "versions").load(f.path.toString)
        .collect().map(r => (r.getLong(0), r.getLong(2))).toSeq
    assert(versions == f.versions.map(v => (v.version, v.countRows)))
    val tags = spark.read.format("lance").option("metadata_table", "tags").load(f.path.toString)
      .collect().map(r => r.getString(0) -> r.getLong(1)).toMap
    assert(tags == f.tags)
  }

  test("bad paths, versions, tags and options are clean errors naming what is wrong") {
    def message(body: => Any): String = {
      val e = intercept[Exception](body)
      Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(
        " | "
      )
    }
    val f = Fixtures("multifrag_2.2")
    val p = f.path.toString
    val tmp = TempDirs.create("spark-errors-")
    assert(message(spark.read.format("lance").load(tmp.resolve("missing").toString)).contains(
      "does not exist"
    ))
    assert(message(spark.read.format("lance").load(tmp.toString)).contains("Not a Lance dataset"))
    assert(message(spark.read.format("lance").option("version", 42).load(p)).contains("Version 42"))
    assert(message(spark.read.format("lance").option("version", "nosuchtag").load(p)).contains(
      "'nosuchtag'"
    ))
    assert(message(
      spark.read.format("lance").option("timestamp", "yesterday-ish").load(p)
    ).contains("'timestamp'"))
    assert(message(spark.read.format("lance").option("version", 1).option(
      "timestamp",
      "2020-01-01"
    ).load(p)).contains("only one"))
    assert(
      message(spark.read.format("lance").option("batch_size", "0").load(p)).contains("'batch_size'")
    )
    assert(message(spark.read.format("lance").option("metadata_table", "nope").load(p)).contains(
      "'metadata_table'"
    ))
    assert(message(spark.read.format("lance").option("runtime_filter_min_bytes", "-1").load(p))
      .contains("'runtime_filter_min_bytes'"))

    val copy = TempDirs.copyOf(f)
    val victim = Files.list(copy.resolve("_versions")).iterator().asScala.filter(
      _.toString.endsWith(".manifest")
    ).toSeq.head
    Files.write(victim, Files.readAllBytes(victim).take(30))
    val m = message(spark.read.format("lance").load(copy.toString))
    assert(m.contains(victim.getFileName.toString) && m.contains("Corrupt"), m)
  }
}
