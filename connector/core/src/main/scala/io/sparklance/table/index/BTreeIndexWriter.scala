package io.sparklance.table.index

import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.storage.{FileIO, Paths, StreamSink}

/**
 * Writes a Lance BTREE scalar index as pylance 14 lays it out in `_indices/<uuid>/`:
 *  - `page_data.lance`: every indexed row as (`values`, `ids`), sorted by value with nulls
 *    first and equal values in row order; `ids` are row addresses (fragment id << 32 | row
 *    offset) — also on tables with stable row ids, as pylance 14 writes them;
 *  - `page_lookup.lance`: one row per page of [[BTreeIndexWriter.BatchSize]] rows of the data
 *    file — `min` (its first value), `max` (its last), `null_count`, `page_idx` — with the
 *    schema metadata `batch_size` and `range_partitioned = false`.
 * Both are Lance 2.2 files. Rows arrive sorted, in batches of any size (`add`); memory holds
 * at most one page.
 */
final class BTreeIndexWriter(io: FileIO, dir: String, valueType: LogicalType)
    extends AutoCloseable {
  import BTreeIndexWriter._

  private val version = FileVersion.V2_2
  private val dataPath = Paths.join(dir, DataFile)
  private val lookupPath = Paths.join(dir, LookupFile)
  private val data = new LanceFileWriter(
    new StreamSink(io.create(dataPath)),
    Seq(
      LanceField(0, -1, "values", valueType, nullable = true, Map.empty, Nil),
      LanceField(1, -1, "ids", LogicalType.UInt64, nullable = false, Map.empty, Nil)
    ),
    version
  )

  private var pending: Seq[ColumnArray] = Nil
  private var pendingIds: Seq[Array[Long]] = Nil
  private var pendingRows = 0
  private val mins = Seq.newBuilder[ColumnArray]
  private val maxs = Seq.newBuilder[ColumnArray]
  private val nullCounts = new scala.collection.mutable.ArrayBuffer[Int]
  private var rows = 0L

  /** Appends sorted rows: `values(i)` is the value of the row `ids(i)`. */
  def add(values: ColumnArray, ids: Array[Long]): Unit = {
    require(values.length == ids.length, s"${values.length} values for ${ids.length} ids")
    var from = 0
    while (from < ids.length) {
      val n = math.min(BatchSize - pendingRows, ids.length - from)
      pending :+= ColumnArrays.slice(values, from, n)
      pendingIds :+= java.util.Arrays.copyOfRange(ids, from, from + n)
      pendingRows += n
      from += n
      if (pendingRows == BatchSize) flushPage()
    }
  }

  private def flushPage(): Unit = if (pendingRows > 0) {
    val values = if (pending.size == 1) pending.head else ColumnArrays.concat(pending)
    val ids = if (pendingIds.size == 1) pendingIds.head else pendingIds.flatten.toArray
    data.write(Array(values, longs(ids)))
    mins += ColumnArrays.slice(values, 0, 1)
    maxs += ColumnArrays.slice(values, values.length - 1, 1)
    var nulls = 0
    var i = 0
    while (i < values.length) { if (values.isNull(i)) nulls += 1; i += 1 }
    nullCounts += nulls
    rows += values.length
    pending = Nil; pendingIds = Nil; pendingRows = 0
  }

  /** Finishes both files and returns them as the index's `files` list (name, size in bytes). */
  def finish(): Seq[(String, Long)] = {
    flushPage()
    val dataSize =
      try data.finish().sizeBytes
      finally data.close()
    val pages = nullCounts.size
    val lookup = new LanceFileWriter(
      new StreamSink(io.create(lookupPath)),
      Seq(
        LanceField(0, -1, "min", valueType, nullable = true, Map.empty, Nil),
        LanceField(1, -1, "max", valueType, nullable = true, Map.empty, Nil),
        LanceField(2, -1, "null_count", LogicalType.UInt32, nullable = false, Map.empty, Nil),
        LanceField(3, -1, "page_idx", LogicalType.UInt32, nullable = false, Map.empty, Nil)
      ),
      version,
      schemaMetadata = Map("batch_size" -> BatchSize.toString, "range_partitioned" -> "false")
    )
    val lookupSize =
      try {
        if (pages > 0) lookup.write(Array(
          ColumnArrays.concat(mins.result()),
          ColumnArrays.concat(maxs.result()),
          ints(nullCounts.toArray),
          ints(Array.tabulate(pages)(identity))
        ))
        lookup.finish().sizeBytes
      } finally lookup.close()
    Seq(DataFile -> dataSize, LookupFile -> lookupSize)
  }

  /** Rows written to the data file so far. */
  def numRows: Long = rows + pendingRows

  override def close(): Unit = data.close()
}

object BTreeIndexWriter {

  /** Rows per page of the data file, as pylance writes them (`batch_size`). */
  val BatchSize: Int = 4096
  val DataFile = "page_data.lance"
  val LookupFile = "page_lookup.lance"

  private def longs(a: Array[Long]): ColumnArray = {
    val bytes = java.nio.ByteBuffer.allocate(a.length * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    bytes.asLongBuffer().put(a)
    new FixedWidthArray(a.length, null, 8, bytes.array())
  }

  private def ints(a: Array[Int]): ColumnArray = {
    val bytes = java.nio.ByteBuffer.allocate(a.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    bytes.asIntBuffer().put(a)
    new FixedWidthArray(a.length, null, 4, bytes.array())
  }
}
