package io.sparklance.spark

import java.util.Locale

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.spark.write.LanceWriteOptions
import io.sparklance.storage.s3.S3Config

/**
 * Every option name the connector takes, and the check that refuses the others, so that no
 * option is silently ignored: a typo (`verison`) fails naming the nearest known name, and an
 * option of another format that would change what a read or write does (Delta's
 * `readChangeFeed`, Iceberg's `snapshot-id`, ...) fails saying why. Readers, writers and the
 * catalog share one set: Spark hands a table's read and write options to the same provider.
 *
 * Let through: the read and write options ([[LanceReadOptions]], [[LanceWriteOptions]]), the
 * storage settings ([[S3Config]]), Spark's own (`path`, `paths`, `location`), and families
 * passed to Hadoop or kept internal (`fs.*`, `dfs.*`, `hadoop.*`, `spark.*`, `aws_*`,
 * `storage_options.*`, `__*`), and table properties (`lance.encoding.*`, `lance.version`, ...). Session setting [[RelaxKey]] lets unknown names through (for
 * jobs sharing one options map across formats); other formats' options stay refused.
 */
object LanceOptionNames {
  val RelaxKey = "spark.lance.allowUnknownOptions"

  /** Options Spark itself puts in a source's options. */
  val SparkNames: Seq[String] = Seq("path", "paths", "location")

  /**
   * A catalog's own option (`spark.sql.catalog.<name>.root`), and the table properties a
   * CREATE TABLE hands its write ([[LanceTableChanges]]).
   */
  val CatalogNames: Seq[String] = Seq(
    "root",
    LanceTableChanges.VersionKey,
    LanceTableChanges.FormatKey,
    LanceTableChanges.PrimaryKeyKey
  )
  val PassThroughPrefixes: Seq[String] = Seq(
    "fs.",
    "dfs.",
    "hadoop.",
    "spark.",
    "aws_",
    "storage_options.",
    "__",
    ColumnEncodingProperties.Prefix
  )

  /**
   * Options of other formats that would change what a read or write does if ignored, and
   * why they are refused.
   */
  val Foreign: Map[String, String] = {
    val changeFeed = "Lance datasets have no change feed yet; read two versions (option " +
      "version) and compare them"
    val iceberg = "it is Iceberg's; read a version with option version, versionAsOf or " +
      "timestamp"
    Map(
      "readChangeFeed" -> changeFeed,
      "readChangeData" -> changeFeed,
      "startingVersion" -> changeFeed,
      "startingTimestamp" -> changeFeed,
      "endingVersion" -> changeFeed,
      "endingTimestamp" -> changeFeed,
      "snapshot-id" -> iceberg,
      "as-of-timestamp" -> iceberg,
      "start-snapshot-id" -> iceberg,
      "end-snapshot-id" -> iceberg,
      "overwriteSchema" -> ("it is Delta's; an overwrite here writes the DataFrame's schema " +
        "(use mergeSchema to add columns on append)"),
      "txnAppId" -> "idempotent writes (Delta's txnAppId/txnVersion) are not supported",
      "txnVersion" -> "idempotent writes (Delta's txnAppId/txnVersion) are not supported",
      "partitionOverwriteMode" -> ("Lance datasets have no partitions; an overwrite replaces " +
        "the whole dataset")
    )
  }

  /**
   * The names the README's option tables list, comma-separated, for `kind` `read`, `write`,
   * `storage` or `foreign` (a test holds the README to these).
   */
  def documented(kind: String): String = (kind match {
    case "read" => LanceReadOptions.Names.filterNot(_ == "path")
    case "write" => LanceWriteOptions.Names.filterNot(_ == "path")
    case "storage" => S3Config.PylanceNames
    case "foreign" => Foreign.keys.toSeq
    case other => throw new IllegalArgumentException(s"no option kind '$other'")
  }).sorted.mkString(",")

  /** Every name that is let through by name, lower-cased. */
  private lazy val known: Set[String] =
    (LanceReadOptions.Names ++ LanceWriteOptions.Names ++ S3Config.OptionNames ++
      SparkNames ++ CatalogNames).map(lower).toSet

  /** The names a typo is matched against: the options a user sets. */
  private lazy val suggestions: Seq[String] =
    (LanceReadOptions.Names ++ LanceWriteOptions.Names ++ S3Config.OptionNames ++ CatalogNames)
      .distinct

  private lazy val foreign: Map[String, (String, String)] =
    Foreign.map { case (k, why) => lower(k) -> (k -> why) }

  def check(options: CaseInsensitiveStringMap): Unit =
    check(options.asCaseSensitiveMap().asScala.keys, relaxed)

  /** Refuses the first name of `names` that is another format's or (unless `relax`) unknown. */
  def check(names: Iterable[String], relax: Boolean): Unit = names.foreach { name =>
    val k = lower(name)
    foreign.get(k).foreach { case (n, why) => throw LanceErrors.foreignOption(n, why) }
    if (!relax && !known.contains(k) && !PassThroughPrefixes.exists(k.startsWith))
      throw LanceErrors.unknownOption(name, nearest(name), RelaxKey)
  }

  /**
   * Of a catalog table's properties (Spark's `provider`, `owner`, `comment`, TBLPROPERTIES:
   * free-form metadata, not options), those that are options.
   */
  def optionsAmong(properties: Map[String, String]): Map[String, String] =
    properties.filter { case (k0, _) =>
      val k = lower(k0)
      known.contains(k) || PassThroughPrefixes.exists(k.startsWith)
    }

  /** Whether `properties` are a catalog table's (Spark adds the provider), not options. */
  def isCatalogTable(properties: java.util.Map[String, String]): Boolean =
    properties.containsKey("provider") || properties.containsKey("owner")

  /**
   * Whether the session whose query this is lets unknown names through: Spark's conf of the
   * running query (the active session's on the driver), as every SQL setting is read.
   */
  private def relaxed: Boolean =
    SQLConf.get.getConfString(RelaxKey, "false").trim.equalsIgnoreCase("true")

  /** The known name closest to `name` (ignoring case), if close enough to be a typo. */
  def nearest(name: String): Option[String] = {
    val k = lower(name)
    val scored = suggestions.map(s => s -> distance(k, lower(s)))
    scored.sortBy(_._2).headOption.filter { case (_, d) => d <= math.max(2, k.length / 3) }
      .map(_._1)
  }

  private def lower(s: String): String = s.toLowerCase(Locale.ROOT)

  /** Levenshtein distance, with an adjacent transposition counted as one edit. */
  private def distance(a: String, b: String): Int = {
    val d = Array.ofDim[Int](a.length + 1, b.length + 1)
    for (i <- 0 to a.length) d(i)(0) = i
    for (j <- 0 to b.length) d(0)(j) = j
    for (i <- 1 to a.length; j <- 1 to b.length) {
      val cost = if (a(i - 1) == b(j - 1)) 0 else 1
      d(i)(j) = math.min(math.min(d(i - 1)(j) + 1, d(i)(j - 1) + 1), d(i - 1)(j - 1) + cost)
      if (i > 1 && j > 1 && a(i - 1) == b(j - 2) && a(i - 2) == b(j - 1))
        d(i)(j) = math.min(d(i)(j), d(i - 2)(j - 2) + 1)
    }
    d(a.length)(b.length)
  }
}
