package io.sparklance.spark

import java.time.ZoneId

import org.apache.spark.sql.catalyst.util.DateTimeUtils
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.types.UTF8String

import io.sparklance.LanceErrors
import io.sparklance.table.VersionSpec
import io.sparklance.spark.OptionValues.{bool, nonNegativeLong, positiveInt, positiveLong, share}

/** What a metadata-table read returns instead of the dataset's rows. */
sealed abstract class MetadataTable(val name: String) extends Serializable
object MetadataTable {
  case object Versions extends MetadataTable("versions")
  case object Tags extends MetadataTable("tags")
  case object Fragments extends MetadataTable("fragments")
  case object Indices extends MetadataTable("indices")
  val all: Seq[MetadataTable] = Seq(Versions, Tags, Fragments, Indices)

  def named(name: String): Option[MetadataTable] = all.find(_.name.equalsIgnoreCase(name.trim))
}

/**
 * Every read option, parsed and checked in one place. Options come from
 * `DataFrameReader.option(...)` and, through SessionConfigSupport, from session confs
 * `spark.datasource.lance.<name>`; explicit reader options win.
 *
 *  - `path` (required): the dataset directory, any Hadoop file system URI.
 *  - `version`: a version number, or a tag name (as pylance's `version=` accepts both).
 *    `versionAsOf` (Delta's and Iceberg's name) is the same, for version numbers.
 *  - `tag`: a tag name.
 *  - `timestamp`: read the newest version committed at or before this time; any form
 *    Spark's CAST(... AS TIMESTAMP) accepts, in the session time zone unless it names one.
 *    `timestampAsOf` is the same.
 *  - `metadata_table`: `versions`, `tags`, `fragments` or `indices` to read the dataset's
 *    history, its latest version's fragments or its indices instead of rows.
 *  - `batch_size`: rows per columnar batch (default 4096).
 *  - `split_size`: target bytes of data per Spark partition (default: Spark's rule for file
 *    sources, `spark.sql.files.maxPartitionBytes` but no more than the dataset's bytes divided
 *    by the default parallelism, so every core gets work; a little less where that makes the
 *    number of splits a multiple of the cores; one split per core for the rows of a grouping
 *    left to Spark, see [[GroupingSampler]]).
 *  - `filter_pushdown`: evaluate supported predicates in the reader (default true); `false`
 *    leaves every filter to Spark.
 *  - `use_scalar_index`: let the dataset's BTREE, BITMAP and ZONEMAP indices skip fragments
 *    and batches that cannot match a pushed filter, and BTREE indices answer MIN/MAX (default
 *    true, pylance's `use_scalar_index`); never changes a result.
 *  - `aggregate_pushdown`: let each task aggregate its rows when Spark pushes an aggregation
 *    (COUNT, SUM of exact integer and decimal expressions, MIN/MAX, grouped by plain
 *    columns; default true); `false` returns rows to Spark's own aggregation.
 *  - `aggregate_pushdown_group_share`: push a grouped aggregation only when a sample of the
 *    first task's rows says a task folds its rows into at most this many groups per row
 *    (default 0.5; see [[GroupingSampler]]); `1` pushes every grouping the scan can compute.
 *  - `topn_pushdown`: let each task return only its first rows of an `ORDER BY ... LIMIT n`
 *    Spark pushes (n up to 10,000), reading the other columns of those rows only (default
 *    true); `false` returns every row to Spark's sort.
 *  - `runtime_filter_min_bytes`: a dataset of fewer data bytes (default 1 MiB) names no column
 *    Spark's own dynamic pruning may filter: reading it costs less than planning the pruning
 *    subquery (a copy of the other join side, with its own pruning) does. `0` offers every
 *    dataset. The connector's own pruning rules choose their targets themselves.
 */
final case class LanceReadOptions(
    path: String,
    versionSpec: VersionSpec,
    metadataTable: Option[MetadataTable],
    batchSize: Int,
    splitSizeBytes: Long,
    filterPushdown: Boolean = true,
    /** Whether `split_size` was given; if not, splits also shrink to use every core. */
    splitSizeGiven: Boolean = false,
    useScalarIndex: Boolean = true,
    aggregatePushdown: Boolean = true,
    aggregateGroupShare: Double = LanceReadOptions.DefaultAggregateGroupShare,
    topNPushdown: Boolean = true,
    runtimeFilterMinBytes: Long = LanceReadOptions.DefaultRuntimeFilterMinBytes
)

object LanceReadOptions {
  val Path = "path"
  val Version = "version"
  val Tag = "tag"
  val Timestamp = "timestamp"
  val VersionAsOf = "versionAsOf"
  val TimestampAsOf = "timestampAsOf"
  val MetadataTableKey = "metadata_table"
  val BatchSize = "batch_size"
  val SplitSize = "split_size"
  val FilterPushdown = "filter_pushdown"
  val UseScalarIndex = "use_scalar_index"
  val AggregatePushdown = "aggregate_pushdown"
  val AggregateGroupShare = "aggregate_pushdown_group_share"
  val DefaultAggregateGroupShare = 0.5
  val TopNPushdown = "topn_pushdown"
  val RuntimeFilterMinBytes = "runtime_filter_min_bytes"
  val DefaultRuntimeFilterMinBytes: Long = 1L << 20

  /** A branch of the dataset (pylance's `create_branch`): its own dataset under `tree/`. */
  val Branch = "branch"

  /** Every read option's name. */
  val Names: Seq[String] = Seq(
    Path,
    Version,
    Tag,
    Timestamp,
    VersionAsOf,
    TimestampAsOf,
    MetadataTableKey,
    BatchSize,
    SplitSize,
    FilterPushdown,
    UseScalarIndex,
    AggregatePushdown,
    AggregateGroupShare,
    TopNPushdown,
    RuntimeFilterMinBytes,
    Branch
  )

  def parse(
      options: CaseInsensitiveStringMap,
      sessionZone: ZoneId,
      defaultSplitBytes: Long
  ): LanceReadOptions = {
    LanceOptionNames.check(options)
    val path = Option(options.get(Path)).filter(_.nonEmpty).getOrElse(
      throw LanceErrors.invalidOption(
        Path,
        "",
        "a Lance dataset path is required: spark.read.format(\"lance\").load(path)"
      )
    )
    LanceReadOptions(
      path = Option(options.get(Branch)).map(_.trim).filter(_.nonEmpty)
        .fold(path)(b => io.sparklance.table.Branches.path(path, b)),
      versionSpec = versionSpec(options, sessionZone),
      metadataTable = Option(options.get(MetadataTableKey)).map { v =>
        MetadataTable.all.find(_.name.equalsIgnoreCase(v.trim)).getOrElse(
          throw LanceErrors.invalidOption(
            MetadataTableKey,
            v,
            s"expected one of ${MetadataTable.all.map(_.name).mkString(", ")}"
          )
        )
      },
      batchSize = positiveInt(options, BatchSize, 4096),
      splitSizeBytes = positiveLong(options, SplitSize, defaultSplitBytes),
      filterPushdown = bool(options, FilterPushdown, default = true),
      splitSizeGiven = options.containsKey(SplitSize),
      useScalarIndex = bool(options, UseScalarIndex, default = true),
      aggregatePushdown = bool(options, AggregatePushdown, default = true),
      aggregateGroupShare = share(options, AggregateGroupShare, DefaultAggregateGroupShare),
      topNPushdown = bool(options, TopNPushdown, default = true),
      runtimeFilterMinBytes =
        nonNegativeLong(options, RuntimeFilterMinBytes, DefaultRuntimeFilterMinBytes)
    )
  }

  private def versionSpec(options: CaseInsensitiveStringMap, zone: ZoneId): VersionSpec = {
    val set = Seq(Version, VersionAsOf, Tag, Timestamp, TimestampAsOf)
      .filter(k => options.containsKey(k))
    if (set.size > 1)
      throw LanceErrors.invalidOption(
        set.mkString("/"),
        set.map(options.get).mkString("/"),
        s"set only one of options ${set.mkString(", ")}"
      )
    set.headOption match {
      case None => VersionSpec.Latest
      case Some(Version) =>
        val v = options.get(Version).trim
        if (v.nonEmpty && v.forall(_.isDigit)) {
          val n =
            try v.toLong
            catch {
              case _: NumberFormatException =>
                throw LanceErrors.invalidOption(Version, v, "too large")
            }
          if (n < 1) throw LanceErrors.invalidOption(Version, v, "versions start at 1")
          VersionSpec.Number(n)
        } else if (v.isEmpty)
          throw LanceErrors.invalidOption(Version, v, "expected a version number or a tag name")
        else VersionSpec.TagName(v)
      case Some(VersionAsOf) =>
        val v = options.get(VersionAsOf).trim
        val n =
          try v.toLong
          catch {
            case _: NumberFormatException =>
              throw LanceErrors.invalidOption(VersionAsOf, v, "expected a version number")
          }
        if (n < 1) throw LanceErrors.invalidOption(VersionAsOf, v, "versions start at 1")
        VersionSpec.Number(n)
      case Some(Tag) =>
        val t = options.get(Tag).trim
        if (t.isEmpty) throw LanceErrors.invalidOption(Tag, t, "expected a tag name")
        VersionSpec.TagName(t)
      case Some(key) =>
        val raw = options.get(key).trim
        val micros = DateTimeUtils.stringToTimestamp(UTF8String.fromString(raw), zone).getOrElse(
          throw LanceErrors.invalidOption(
            key,
            raw,
            "not a timestamp, e.g. '2025-06-01 12:00:00' or '2025-06-01T12:00:00Z'"
          )
        )
        VersionSpec.AsOf(micros)
    }
  }
}
