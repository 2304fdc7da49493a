package io.sparklance.testutil

import java.io.{BufferedReader, InputStreamReader}
import java.nio.file.{Files, Path, Paths}
import java.util.zip.GZIPInputStream

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{DeserializationFeature, JsonNode, ObjectMapper}

/**
 * The pylance-generated fixtures of src-test-data/: datasets plus what pylance read from
 * every version (see src-test-data/README.md). Tests compare against these, never against
 * hand-typed values.
 */
object Fixtures {
  // Floats parse as doubles (exactly the value pylance printed, -0.0 included); integers as
  // BigIntegers, since uint64 values exceed a long.
  val mapper: ObjectMapper = new ObjectMapper()
    .enable(DeserializationFeature.USE_BIG_INTEGER_FOR_INTS)

  /** The repository root: set by the build for forked tests, else found from the working directory. */
  lazy val repoRoot: Path = Option(System.getProperty("sparklance.repo.root")).map(Paths.get(_))
    .getOrElse {
      var p = Paths.get("").toAbsolutePath
      while (p != null && !Files.exists(p.resolve("build.sbt"))) p = p.getParent
      require(
        p != null,
        "cannot find the repository root (no build.sbt above the working directory)"
      )
      p
    }

  lazy val testData: Path = repoRoot.resolve("src-test-data")

  /** Every generated dataset, plus the external ones (src-test-data/external). */
  lazy val all: Seq[Fixture] = {
    val index = mapper.readTree(testData.resolve("expected/_index.json").toFile)
    val generated = index.get("datasets").elements().asScala.toSeq.map { d =>
      Fixture(
        mapper.readTree(testData.resolve(d.get("expected").asText()).toFile),
        external = false
      )
    }
    val extDir = testData.resolve("expected/external")
    val external =
      if (!Files.isDirectory(extDir)) Nil
      else Files.list(extDir).iterator().asScala.filter(_.toString.endsWith(".json")).toSeq.sortBy(
        _.toString
      )
        .map(p => Fixture(mapper.readTree(p.toFile), external = true))
    generated ++ external
  }

  def apply(name: String): Fixture =
    all.find(_.name == name).getOrElse(sys.error(s"no fixture named $name"))

  def byFormat(formats: String*): Seq[Fixture] = all.filter(f => formats.contains(f.format))
}

/** One dataset and pylance's view of each of its versions. */
final case class Fixture(json: JsonNode, external: Boolean) {
  def name: String = json.get("name").asText()

  /** "legacy", "2.0", "2.1", "2.2" (for external datasets: what pylance read, "0.1" = legacy). */
  def format: String = {
    val given = json.get("data_storage_version")
    val v = if (given == null || given.isNull) json.get("data_storage_version_read").asText()
    else given.asText()
    if (v == "0.1") "legacy" else v
  }

  def path: Path = {
    val rel = json.get("path").asText()
    (if (external) Fixtures.repoRoot else Fixtures.testData).resolve(rel).normalize()
  }

  def latestVersion: Long = json.get("latest_version").asLong()

  def tags: Map[String, Long] =
    json.get("tags").fields().asScala.map(e => e.getKey -> e.getValue.asLong()).toMap

  def versions: Seq[FixtureVersion] =
    json.get("versions").elements().asScala.toSeq.map(FixtureVersion(this, _))

  def version(v: Long): FixtureVersion = versions.find(_.version == v).get

  override def toString: String = name
}

final case class FixtureVersion(fixture: Fixture, json: JsonNode) {
  def version: Long = json.get("version").asLong()
  def countRows: Long = json.get("count_rows").asLong()
  def timestampMicros: Long = json.get("timestamp_epoch_us").asLong()
  def numFragments: Int = json.get("num_fragments").asInt()
  def schema: JsonNode = json.get("schema")
  def error: Option[String] = Option(json.get("error")).filterNot(_.isNull).map(_.asText())

  /** pylance's `to_table()` rows at this version, one JSON object per row. */
  def rows: IndexedSeq[JsonNode] = {
    val rel = json.get("rows_file").asText()
    val p = Fixtures.testData.resolve(rel)
    val in = Files.newInputStream(p)
    val stream = if (rel.endsWith(".gz")) new GZIPInputStream(in) else in
    val r = new BufferedReader(new InputStreamReader(stream, "UTF-8"))
    try r.lines().iterator().asScala.filter(_.nonEmpty).map(l =>
        Fixtures.mapper.readTree(l)
      ).toIndexedSeq
    finally r.close()
  }

  override def toString: String = s"${fixture.name}@v$version"
}
