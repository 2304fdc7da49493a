package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.unsafe.Platform

import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.format.writer.{ByteBuf, IntBuf}

/**
 * A few hundred `UnsafeRow`s copied whole, one after another, so that each column's builder
 * takes its values from all of them in one loop ([[ColBuilder.addStaged]]) instead of one
 * call per row and column. Rows are read in Spark's `UnsafeRow` layout: a null bit set of
 * `8 * ceil(fields / 64)` bytes, then one 8-byte slot per field holding a fixed-width value
 * in its low bytes or a variable-width value's offset (from the row's start, high half) and
 * length (low half). Only on little-endian machines, where the slots are little-endian too.
 */
private[write] final class StagedRows {
  private val data = new ByteBuf(StagedRows.MaxBytes + 4096)
  private val starts = new IntBuf(StagedRows.MaxRows)
  private var fields = -1
  private var bitSetBytes = 0

  def rows: Int = starts.size
  def bytes: Long = data.size

  /** The rows' bytes; a row starts at [[start]]. */
  def array: Array[Byte] = data.array
  def start(r: Int): Int = starts(r)

  /** Full enough to hand to the builders: the rows still fit in the CPU's cache. */
  def full: Boolean = starts.size >= StagedRows.MaxRows || data.size >= StagedRows.MaxBytes

  /** Whether `row` can join the rows staged so far (those have as many fields). */
  def accepts(row: UnsafeRow): Boolean = fields < 0 || row.numFields == fields

  def add(row: UnsafeRow): Unit = {
    if (fields < 0) {
      fields = row.numFields
      bitSetBytes = UnsafeRow.calculateBitSetWidthInBytes(fields)
    }
    val n = row.getSizeInBytes
    val at = data.extend(n)
    Platform.copyMemory(
      row.getBaseObject,
      row.getBaseOffset,
      data.array,
      Platform.BYTE_ARRAY_OFFSET + at,
      n
    )
    starts.add(at)
  }

  @inline def isNull(r: Int, ord: Int): Boolean =
    ((LE.i64(data.array, starts(r) + ((ord >> 6) << 3)) >>> (ord & 63)) & 1L) != 0

  /** The 8-byte slot of field `ord` in row `r`. */
  @inline def slot(r: Int, ord: Int): Long = LE.i64(data.array, starts(r) + bitSetBytes + 8 * ord)

  def clear(): Unit = { data.clear(); starts.clear(); fields = -1 }
}

private[write] object StagedRows {
  val MaxRows = 1024
  val MaxBytes: Int = 256 * 1024

  /** `UnsafeRow` slots read as little-endian words hold the values only on such machines. */
  val Supported: Boolean = java.nio.ByteOrder.nativeOrder == java.nio.ByteOrder.LITTLE_ENDIAN
}
