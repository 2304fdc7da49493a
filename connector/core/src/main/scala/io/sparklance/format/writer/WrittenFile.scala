package io.sparklance.format.writer

/** What a finished data file holds, as its `DataFile` entry in a manifest records it. */
final case class WrittenFile(
    fieldIds: Array[Int],
    columnIndices: Array[Int],
    numRows: Long,
    sizeBytes: Long,
    version: FileVersion
)
