package io.sparklance.format.legacy

import scala.collection.mutable.ArrayBuffer

import io.sparklance.format._
import io.sparklance.storage.RandomAccessInput

/**
 * A legacy (0.1, footer 0.0..0.2) data file. Rows are grouped in batches; every field has one
 * page per batch, found through the page table. A scan reads, per `next`, exactly the bytes
 * of the requested rows in each batch they span.
 */
final class LegacyFileReader private (
    input: RandomAccessInput,
    val layout: LegacyLayout,
    fileFields: FileFields
) extends LanceFileReader {

  def path: String = input.path
  def numRows: Long = layout.numRows

  private val present: Set[Int] = fileFields.fieldIds.filter(_ >= 0).toSet

  def scan(fields: Seq[LanceField], startRow: Long, endRow: Long): FileScan = {
    if (startRow < 0 || endRow < startRow || endRow > numRows)
      throw new IllegalArgumentException(
        s"row range [$startRow, $endRow) is outside the $numRows rows of $path"
      )
    val decoder = new LegacyPageDecoder(input, layout)
    decoder.presentIds = present
    val shapes = fields.map(ValueShape.of).toArray
    val fieldArr = fields.toArray
    new FileScan {
      private var row = startRow
      def next(n: Int): Array[ColumnArray] = {
        if (n < 0 || row + n > endRow)
          throw new IllegalArgumentException(
            s"asked for $n rows but only ${endRow - row} remain in the scan of $path"
          )
        // Split [row, row + n) at batch boundaries.
        val pieces = ArrayBuffer[(Int, Long, Long)]()
        var r = row
        var b = batchOf(r)
        while (r < row + n) {
          val bEnd = math.min(layout.batchOffsets(b + 1), row + n)
          if (bEnd > r) pieces += ((b, r - layout.batchOffsets(b), bEnd - layout.batchOffsets(b)))
          r = bEnd
          b += 1
        }
        row += n
        Array.tabulate(fieldArr.length) { i =>
          val f = fieldArr(i)
          if (!present.contains(f.id) || !layout.hasPage(f.id)) new NullArray(n)
          else if (n == 0) ColumnArrays.empty(shapes(i))
          else {
            val parts = pieces.map { case (batch, s, e) =>
              decoder.decode(
                f,
                shapes(i),
                batch,
                s,
                e,
                PageContext(path, f.name, f.id, f.id - layout.minFieldId, batch)
              )
            }
            ColumnArrays.concat(parts.toSeq)
          }
        }
      }

      /** Rows are addressed directly in every batch: skipping reads nothing. */
      override def skip(n: Int): Unit = {
        if (n < 0 || row + n > endRow)
          throw new IllegalArgumentException(
            s"asked to skip $n rows but only ${endRow - row} remain in the scan of $path"
          )
        row += n
      }
      def close(): Unit = ()
    }
  }

  /**
   * Legacy files cut every field at the same batch boundaries: one span list stands for all
   * columns. The page table records value counts, not sizes, so `bytes` holds each batch's row
   * count; with a single candidate only the boundaries matter.
   */
  def pageSpans(fields: Seq[LanceField]): Seq[ColumnPageSpans] =
    if (!fields.exists(f => present.contains(f.id) || f.children.nonEmpty)) Nil
    else {
      val starts = layout.batchOffsets.clone()
      Seq(ColumnPageSpans(
        -1,
        starts,
        Array.tabulate(layout.numBatches)(b => starts(b + 1) - starts(b))
      ))
    }

  /** The batch holding `row` (the last batch when row == numRows). */
  private def batchOf(row: Long): Int = {
    val bo = layout.batchOffsets
    var lo = 0
    var hi = layout.numBatches - 1
    while (lo < hi) {
      val mid = (lo + hi + 1) >>> 1
      if (bo(mid) <= row) lo = mid else hi = mid - 1
    }
    math.max(lo, 0)
  }

  def close(): Unit = input.close()
}

object LegacyFileReader {
  def open(input: RandomAccessInput, tail: Array[Byte], fileFields: FileFields): LegacyFileReader =
    new LegacyFileReader(input, LegacyLayout.read(input, tail, fileFields.fieldIds), fileFields)
}
