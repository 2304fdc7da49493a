package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.format.writer.{FileVersion, FileWriterOptions}
import io.sparklance.spark.OptionValues.{bool, positiveLong}

/**
 * Every write option, parsed and checked in one place; names follow pylance's
 * `write_dataset` where it has them.
 *
 *  - `path` (required): the dataset directory.
 *  - `data_storage_version`: `2.0`, `2.1`, `2.2` (or `stable`). New datasets default to 2.2;
 *    appends write the dataset's own version; an overwrite keeps the dataset's version
 *    unless this is set.
 *  - `max_rows_per_file` (default 1048576) and `max_bytes_per_file` (default 90 GiB): a task
 *    starts a new data file (a new fragment) when either is reached.
 *  - `enable_stable_row_ids` (default false): new datasets only, as in pylance.
 *  - `max_page_bytes` (default 8 MiB): values a column buffers before writing a page; bounds
 *    a task's memory (about this much per column) whatever the file size.
 *  - `commit_retries` (default 20): how often a commit is retried over concurrent appends.
 *  - `commit_timeout_seconds` (default 30): how long a commit keeps retrying before it gives
 *    up with a concurrent-modification error (nothing committed, its files deleted).
 *  - `vector_columns`: `name:dim[,name:dim…]` — these array columns of numbers are written as
 *    vectors, `fixed_size_list<item>[dim]` (as the field metadata `arrow.fixed-size-list.size`
 *    does); new datasets and overwrites.
 *  - `commit_message`: recorded with the commit, as pylance's `commit_message` (pylance shows
 *    it in `read_transaction(v).transaction_properties`).
 *  - `branch`: appends and overwrites go to this branch (pylance's `create_branch`), which
 *    must exist.
 *  - `primary_key`: `col[,col…]` — new datasets and overwrites: these top-level columns become
 *    the unenforced primary key (NOT NULL; see [[io.sparklance.table.PrimaryKey]]); an
 *    append naming another key than the dataset's fails.
 *  - `external_blob_mode` (`reference`, default, or `ingest`) and
 *    `allow_external_blob_outside_bases` (default false): how blob values given as a URI are
 *    stored (pylance's options of those names; see [[io.sparklance.format.blob.ExternalBlobs]]).
 */
final case class LanceWriteOptions(
    path: String,
    dataStorageVersion: Option[FileVersion],
    maxRowsPerFile: Long,
    maxBytesPerFile: Long,
    enableStableRowIds: Boolean,
    maxPageBytes: Long,
    commitRetries: Int,
    commitTimeoutSeconds: Long,
    commitMessage: Option[String],
    vectorColumns: Map[String, Int],
    mergeSchema: Boolean = false,
    primaryKey: Seq[String] = Nil,
    branch: Option[String] = None,
    ingestExternalBlobs: Boolean = false,
    allowExternalBlobsOutsideBases: Boolean = false
) {
  def fileWriterOptions: FileWriterOptions = FileWriterOptions(maxPageBytes)

  /** `schema` with the `vector_columns` marked as vectors in their field metadata. */
  def withVectorColumns(schema: org.apache.spark.sql.types.StructType)
      : org.apache.spark.sql.types.StructType = {
    import org.apache.spark.sql.types.MetadataBuilder
    vectorColumns.keys.filterNot(schema.fieldNames.contains).foreach { c =>
      throw LanceErrors.invalidOption(
        LanceWriteOptions.VectorColumns,
        c,
        s"no such column; the DataFrame has ${schema.fieldNames.mkString(", ")}"
      )
    }
    org.apache.spark.sql.types.StructType(schema.fields.map { f =>
      vectorColumns.get(f.name).fold(f) { dim =>
        f.copy(metadata =
          new MetadataBuilder().withMetadata(f.metadata)
            .putLong(SparkToLance.FixedSizeListKey, dim).build()
        )
      }
    })
  }
}

object LanceWriteOptions {
  val Path = "path"
  val DataStorageVersion = "data_storage_version"
  val MaxRowsPerFile = "max_rows_per_file"
  val MaxBytesPerFile = "max_bytes_per_file"
  val EnableStableRowIds = "enable_stable_row_ids"
  val MaxPageBytes = "max_page_bytes"
  val CommitRetries = "commit_retries"
  val CommitTimeoutSeconds = "commit_timeout_seconds"
  val CommitMessage = "commit_message"
  val VectorColumns = "vector_columns"

  /** Writes go to this existing branch of the dataset (its own dataset under `tree/`). */
  val Branch = "branch"

  /** A new table's unenforced primary key: top-level columns, comma-separated. */
  val PrimaryKey = "primary_key"

  /** `reference` (External descriptors) or `ingest` (the bytes stored) for URI blob values. */
  val ExternalBlobMode = "external_blob_mode"

  /** Absolute external blob URIs outside the dataset's registered bases are allowed. */
  val AllowExternalBlobOutsideBases = "allow_external_blob_outside_bases"

  /** Delta's name: an append may carry new top-level columns, added first (all null before). */
  val MergeSchema = "mergeSchema"

  /**
   * Options other formats honour that would change what a write does here if ignored:
   * refused, never silently dropped (an overwrite with `replaceWhere` must not replace the
   * whole dataset).
   */
  val Unsupported: Map[String, String] = Map(
    "replaceWhere" -> ("it applies to df.write.mode(\"overwrite\") only; with writeTo use " +
      "overwrite(condition), in SQL INSERT INTO t REPLACE WHERE condition")
  )

  private def parseVectorColumns(v: String): Map[String, Int] =
    v.split(',').map(_.trim).filter(_.nonEmpty).map { spec =>
      val i = spec.lastIndexOf(':')
      val dim = if (i <= 0) None else scala.util.Try(spec.substring(i + 1).trim.toInt).toOption
      dim.filter(_ > 0).map(d => spec.substring(0, i).trim -> d).getOrElse(
        throw LanceErrors.invalidOption(
          VectorColumns,
          v,
          s"'$spec' is not name:dim (e.g. embedding:768)"
        )
      )
    }.toMap

  /** Every write option's name (`replaceWhere` is taken by an overwrite's save). */
  val Names: Seq[String] = Seq(
    Path,
    DataStorageVersion,
    MaxRowsPerFile,
    MaxBytesPerFile,
    EnableStableRowIds,
    MaxPageBytes,
    CommitRetries,
    CommitTimeoutSeconds,
    CommitMessage,
    VectorColumns,
    Branch,
    PrimaryKey,
    MergeSchema,
    ExternalBlobMode,
    AllowExternalBlobOutsideBases,
    "replaceWhere"
  )

  def parse(options: CaseInsensitiveStringMap): LanceWriteOptions = {
    io.sparklance.spark.LanceOptionNames.check(options)
    Unsupported.foreach { case (k, why) =>
      Option(options.get(k)).foreach(v => throw LanceErrors.invalidOption(k, v, why))
    }
    val path = Option(options.get(Path)).filter(_.nonEmpty).getOrElse(
      throw LanceErrors.invalidOption(
        Path,
        "",
        "a Lance dataset path is required: df.write.format(\"lance\").save(path)"
      )
    )
    LanceWriteOptions(
      path = Option(options.get(Branch)).map(_.trim).filter(_.nonEmpty)
        .fold(path)(b => io.sparklance.table.Branches.path(path, b)),
      branch = Option(options.get(Branch)).map(_.trim).filter(_.nonEmpty),
      dataStorageVersion = Option(options.get(DataStorageVersion)).map { v =>
        FileVersion.parse(v).getOrElse(throw LanceErrors.invalidOption(
          DataStorageVersion,
          v,
          "expected 2.0, 2.1, 2.2 or stable (legacy and 2.3 are not written by this connector)"
        ))
      },
      maxRowsPerFile = positiveLong(options, MaxRowsPerFile, 1024L * 1024),
      maxBytesPerFile = positiveLong(options, MaxBytesPerFile, 90L * 1024 * 1024 * 1024),
      enableStableRowIds = bool(options, EnableStableRowIds, default = false),
      maxPageBytes = positiveLong(options, MaxPageBytes, FileWriterOptions.DefaultPageBudget),
      commitRetries = positiveLong(options, CommitRetries, 20).min(1000).toInt,
      commitTimeoutSeconds = positiveLong(options, CommitTimeoutSeconds, 30).min(86400),
      commitMessage = Option(options.get(CommitMessage)),
      vectorColumns =
        Option(options.get(VectorColumns)).map(parseVectorColumns).getOrElse(Map.empty),
      mergeSchema = bool(options, MergeSchema, default = false),
      primaryKey = Option(options.get(PrimaryKey)).toSeq
        .flatMap(io.sparklance.spark.LanceTableChanges.keyColumns),
      ingestExternalBlobs = Option(options.get(ExternalBlobMode)).map(_.trim.toLowerCase) match {
        case None | Some("reference") => false
        case Some("ingest") => true
        case Some(v) => throw LanceErrors.invalidOption(
            ExternalBlobMode,
            v,
            "expected reference (store the URI) or ingest (store the bytes)"
          )
      },
      allowExternalBlobsOutsideBases =
        bool(options, AllowExternalBlobOutsideBases, default = false)
    )
  }
}
