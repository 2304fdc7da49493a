package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.format.{ColumnArray, FixedWidthArray, LanceField, LanceFileReader}
import io.sparklance.storage.{FileIO, Paths}

/**
 * The page data of a BTREE index (see [[BTreeIndexWriter]]), open for reading: every value
 * the index holds, sorted (nulls first), with the row address of each, read by row range
 * (IndexPruning reads the pages its lookup picks, IndexAggregates reads from either end).
 */
private[index] final class BTreePageData private (data: IndexFileLayout, reader: LanceFileReader)
    extends AutoCloseable {

  /** The `values` field (the indexed column's type). */
  def values: LanceField = data.fields.head

  def numRows: Long = reader.numRows

  /** Rows `[start, end)`: their values and their row addresses (little-endian longs). */
  def rows(start: Long, end: Long): (ColumnArray, ByteBuffer) = {
    val cols = reader.scan(data.fields, start, end).next((end - start).toInt)
    val ids = cols(1).asInstanceOf[FixedWidthArray]
    (cols(0), ByteBuffer.wrap(ids.data).order(ByteOrder.LITTLE_ENDIAN))
  }

  def close(): Unit = reader.close()
}

private[index] object BTreePageData {

  /**
   * Opens the page data of the BTREE index whose files are in `dir` (the data file of `size`
   * bytes as the index records it; 0: unknown, see [[IndexFileLayout.open]]).
   */
  def open(io: FileIO, dir: String, size: Long = 0L): BTreePageData = {
    val (data, reader) =
      IndexFileLayout.open(io, Paths.join(dir, BTreeIndexWriter.DataFile), size)
    try data.expect("values", "ids")
    catch {
      case e: Throwable => reader.close(); throw e
    }
    new BTreePageData(data, reader)
  }
}
