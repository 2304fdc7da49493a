package io.sparklance.table

import io.sparklance.format._
import io.sparklance.storage.FileIO

/** Where one data file of a fragment lives and what it holds; a plain, serializable copy of `DataFile`. */
final case class DataFileRef(
    path: String,
    fieldIds: Array[Int],
    columnIndices: Array[Int],
    major: Int,
    minor: Int,
    sizeBytes: Long,
    /** `DataFile.base_id`: the manifest base path the file lives under, if not the dataset's own. */
    baseId: Option[Int] = None
) {
  def fileFields: FileFields = FileFields(fieldIds, columnIndices)
  def holds(id: Int): Boolean = fieldIds.contains(id)

  /** A reader of this file (its metadata read once per JVM: see [[FileMetadataCache]]). */
  def open(io: FileIO): LanceFileReader =
    LanceFileReader.open(io, path, major, minor, fileFields, sizeBytes)
}
