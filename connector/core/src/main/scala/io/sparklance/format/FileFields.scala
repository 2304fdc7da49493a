package io.sparklance.format

/**
 * Which columns of one data file hold which dataset fields: `DataFile.fields` and
 * `DataFile.column_indices` from the manifest. A field id of -2 is a tombstone (a dropped
 * column still present in the file) and is skipped. An empty `columnIndices` means the
 * columns follow `fieldIds` in order (older writers).
 */
final case class FileFields(fieldIds: Array[Int], columnIndices: Array[Int])
