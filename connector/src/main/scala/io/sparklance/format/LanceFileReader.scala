package io.sparklance.format

import io.sparklance.LanceErrors
import io.sparklance.io.FileIO

/**
 * Which columns of one data file hold which dataset fields: `DataFile.fields` and
 * `DataFile.column_indices` from the manifest. A field id of -2 is a tombstone (a dropped
 * column still present in the file) and is skipped. An empty `columnIndices` means the
 * columns follow `fieldIds` in order (older writers).
 */
final case class FileFields(fieldIds: Array[Int], columnIndices: Array[Int])

/** Sequential decoding of some fields over a row range of one file. */
trait FileScan extends AutoCloseable {
  /**
   * Decodes the next `n` rows of every requested field, in request order. Callers never ask
   * past the end of the range they opened.
   */
  def next(n: Int): Array[ColumnArray]
}

/**
 * One Lance data file, of any supported version. Opening reads only the tail (footer,
 * offset tables, column metadata); scans then read only the pages of requested columns.
 */
trait LanceFileReader extends AutoCloseable {
  def path: String
  def numRows: Long
  /**
   * Rows `[startRow, endRow)` of `fields`. Each field is a dataset field, possibly pruned to
   * a subset of its children. A field (or child) whose id this file does not hold decodes
   * as all nulls.
   */
  def scan(fields: Seq[LanceField], startRow: Long, endRow: Long): FileScan
}

object LanceFileReader {
  /**
   * Opens `path`, written as file version `major.minor` according to the manifest. The
   * footer's own version is checked against it.
   */
  def open(io: FileIO, path: String, major: Int, minor: Int, fields: FileFields): LanceFileReader =
    throw LanceErrors.unsupported(
      s"Reading row data of Lance files is not implemented yet (file $path, version $major.$minor); " +
        "only metadata (schema, versions, count) can be read")
}
