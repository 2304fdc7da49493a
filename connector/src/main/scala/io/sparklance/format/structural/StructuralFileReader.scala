package io.sparklance.format.structural

import io.sparklance.LanceErrors
import io.sparklance.format.{FileContainer, FileFields, FileScan, LanceField}

/** Reads files of versions 2.1 and 2.2, whose columns use structural page layouts. */
object StructuralFileReader {
  /** Rows `[startRow, endRow)` of `fields`; see [[io.sparklance.format.LanceFileReader.scan]]. */
  def scan(
      container: FileContainer,
      fields: Seq[LanceField],
      fileFields: FileFields,
      minor: Int,
      startRow: Long,
      endRow: Long): FileScan =
    throw LanceErrors.unsupported(s"Lance file version 2.$minor is not supported yet (${container.path})")
}
