package io.sparklance

/**
 * Every error the connector raises on purpose. One place, so messages stay consistent:
 * each names the path, version, column or option it is about, and says what to do.
 * No Spark types here: the format and table layers raise these too.
 */
sealed class LanceException(message: String, cause: Throwable = null)
    extends RuntimeException(message, cause)

/** The path, version or tag asked for does not exist. */
final class LanceNotFoundException(message: String) extends LanceException(message)

/** A file is not what the format says it must be (truncated, bad magic, undecodable). */
final class LanceCorruptFileException(message: String, cause: Throwable = null)
    extends LanceException(message, cause)

/** Valid data this version of the connector cannot handle yet (feature flag, encoding, type). */
final class LanceUnsupportedException(message: String) extends LanceException(message)

/**
 * Another writer changed the dataset in a way this write cannot be reconciled with.
 * `retryable` is pylance's distinction: a retryable conflict goes away when the operation is
 * re-run against the newer version (pylance's `delete`/`update` re-run it themselves); an
 * incompatible one (an overwrite or restore replaced the data read) does not.
 */
class LanceConcurrentModificationException(message: String, val retryable: Boolean = false)
    extends LanceException(message)

/**
 * A retryable conflict that outlasted the commit's retries (`commit_retries`,
 * `commit_timeout_seconds`): running the same operation again is safe and should succeed.
 * Its class name says so in PySpark, where it arrives under its JVM name.
 */
final class LanceRetryableConflictException(message: String)
    extends LanceConcurrentModificationException(message, retryable = true)

/**
 * A DataFrame does not fit the dataset it is written to; `column` and `why` say how, so that
 * an error raised where the dataset's path is not known can be raised again naming it.
 */
final class LanceSchemaMismatchException(
    message: String,
    val column: String = null,
    val why: String = null
) extends LanceException(message) {

  /** This error naming the dataset at `path` (when it was raised without one). */
  def at(path: String): LanceSchemaMismatchException =
    if (column == null) this else LanceErrors.schemaMismatch(path, column, why)
}

/** A user-supplied option has a bad value. */
final class LanceInvalidOptionException(message: String) extends LanceException(message)

/** An option name the connector does not take: unknown, or another format's. */
final class LanceUnknownOptionException(message: String) extends LanceException(message)

object LanceErrors {
  def pathNotFound(path: String): LanceNotFoundException =
    new LanceNotFoundException(s"Lance dataset path does not exist: $path")

  def notADataset(path: String, why: String): LanceNotFoundException =
    new LanceNotFoundException(s"Not a Lance dataset: $path ($why)")

  def versionNotFound(path: String, version: Long, available: Seq[Long]): LanceNotFoundException =
    new LanceNotFoundException(
      s"Version $version of Lance dataset $path does not exist; available versions: ${summarize(available)}"
    )

  def tagNotFound(path: String, tag: String, available: Seq[String]): LanceNotFoundException =
    new LanceNotFoundException(
      s"Tag '$tag' of Lance dataset $path does not exist; available tags: " +
        (if (available.isEmpty) "(none)" else available.sorted.mkString(", "))
    )

  def noVersionAsOf(path: String, asOf: String, earliest: String): LanceNotFoundException =
    new LanceNotFoundException(
      s"Lance dataset $path has no version as of $asOf; its earliest version was committed at $earliest"
    )

  def corruptFile(file: String, why: String, cause: Throwable = null): LanceCorruptFileException =
    new LanceCorruptFileException(s"Corrupt or truncated Lance file $file: $why", cause)

  /**
   * A page a writer produced that pylance would not decode as its column's type: the file is
   * not committed (a writer bug, caught before it reaches a table).
   */
  def unreadablePage(
      file: String,
      column: String,
      fieldId: Int,
      logicalType: String,
      page: Int,
      why: String
  ): LanceCorruptFileException =
    new LanceCorruptFileException(s"Refusing to write Lance file $file: column '$column' " +
      s"(field $fieldId) has type $logicalType, but page $page written for it is $why; pylance " +
      "could not read the column as that type, so the write fails instead of committing it")

  def unsupportedFeatureFlags(
      path: String,
      version: Long,
      kind: String,
      flags: Seq[String]
  ): LanceUnsupportedException =
    new LanceUnsupportedException(
      s"Lance dataset $path version $version uses unsupported $kind feature(s): ${flags.mkString(", ")}. " +
        "It was written by a newer Lance; this connector cannot read it safely."
    )

  def unsupportedType(column: String, logicalType: String, why: String): LanceUnsupportedException =
    new LanceUnsupportedException(
      s"Column '$column' has Lance type '$logicalType' which is not supported: $why"
    )

  /** A page of a column does not decode: names the file, the field (name and id), the column and the page. */
  def corruptPage(
      file: String,
      field: String,
      fieldId: Int,
      column: Int,
      page: Int,
      why: String,
      cause: Throwable = null
  ): LanceCorruptFileException =
    new LanceCorruptFileException(
      s"Corrupt or truncated Lance file $file: field '$field' (id $fieldId), column $column, page $page: $why",
      cause
    )

  def badLogicalType(logicalType: String, why: String): LanceCorruptFileException =
    new LanceCorruptFileException(s"Cannot parse Lance logical type '$logicalType': $why")

  def unsupported(what: String): LanceUnsupportedException = new LanceUnsupportedException(what)

  def invalidOption(name: String, value: String, why: String): LanceInvalidOptionException =
    new LanceInvalidOptionException(s"Invalid value '$value' for option '$name': $why")

  /** An option no reader or writer of the connector knows, with the nearest known name. */
  def unknownOption(
      name: String,
      nearest: Option[String],
      relaxKey: String
  ): LanceUnknownOptionException =
    new LanceUnknownOptionException(s"Unknown option '$name' for format lance" +
      nearest.fold("")(n => s"; did you mean '$n'?") + s" (a job that shares one options map " +
      s"across formats may set $relaxKey=true to let unknown names through)")

  /** An option of another format that would change what a read or write does here. */
  def foreignOption(name: String, why: String): LanceUnknownOptionException =
    new LanceUnknownOptionException(s"Option '$name' is not supported by format lance: $why")

  def concurrentModification(
      path: String,
      readVersion: Long,
      why: String,
      retryable: Boolean = false
  ): LanceConcurrentModificationException = {
    val message = s"Concurrent modification of Lance dataset $path: this write started from " +
      s"version $readVersion, but $why. Nothing was committed; re-run the write against the " +
      "new version."
    if (retryable) new LanceRetryableConflictException(message)
    else new LanceConcurrentModificationException(message)
  }

  def schemaMismatch(path: String, column: String, why: String): LanceSchemaMismatchException =
    new LanceSchemaMismatchException(
      s"Cannot write to Lance dataset $path: column '$column' $why",
      column,
      why
    )

  /** A schema change (ALTER TABLE, add/drop/rename columns) that cannot be made as asked. */
  def invalidSchemaChange(path: String, why: String): LanceSchemaMismatchException =
    new LanceSchemaMismatchException(s"Cannot change the schema of Lance dataset $path: $why")

  /** A row written by an overwrite of the rows matching `condition` does not match it. */
  def replaceWhereMismatch(path: String, condition: String): LanceSchemaMismatchException =
    new LanceSchemaMismatchException(s"Cannot write to Lance dataset $path: a written row does " +
      s"not satisfy the condition of the overwrite (replaceWhere), $condition (its value " +
      "there is false or null); an overwrite of the rows matching a condition writes only " +
      "rows that match it")

  def indexNotFound(path: String, name: String, available: Seq[String]): LanceNotFoundException =
    new LanceNotFoundException(s"Lance dataset $path has no index named '$name' (indices: " +
      s"${if (available.isEmpty) "none" else available.sorted.mkString(", ")})")

  def indexExists(path: String, name: String): LanceException =
    new LanceException(s"Lance dataset $path already has an index named '$name'; drop it " +
      "first or replace it")

  def datasetExists(path: String): LanceException =
    new LanceException(
      s"""Lance dataset $path already exists; use mode("append") or mode("overwrite")"""
    )

  private def summarize(vs: Seq[Long]): String =
    if (vs.isEmpty) "(none)"
    else if (vs.size <= 12) vs.sorted.mkString(", ")
    else { val s = vs.sorted; s"${s.head}..${s.last} (${s.size} versions)" }
}
