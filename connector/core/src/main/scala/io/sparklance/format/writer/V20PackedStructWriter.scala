package io.sparklance.format.writer

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.proto.EncodingsV20Protos._

/**
 * A packed struct column of a 2.0 file (see [[PackedStructs]]): pages of
 * `PackedStruct{inner: [Nullable(NoNull(Flat(child bits, buffer 0)))], buffer: page 0}` whose
 * one buffer holds the rows packed, as pylance 14.0.2 writes them. 2.0 has no struct validity,
 * so a null struct is refused, as for plain structs.
 */
private[writer] final class V20PackedStructWriter(
    f: LanceField,
    col: Int,
    c: ContainerWriter,
    budget: Long
) extends V20ColumnWriter {
  private val widths = PackedStructs.childWidths(f, FileVersion.V2_0)
  private val pages = new V20PackedPages(col, c, budget, widths)

  def append(a: ColumnArray): Unit = {
    if (a.hasNulls && a.nulls.exists(identity))
      throw LanceErrors.unsupported(
        s"Column '${f.name}' holds null structs, which Lance file version 2.0 cannot store; write with data_storage_version 2.1 or later"
      )
    val packed = PackedStructs.packFixed(f, widths, a)
    pages.buf.bytes(packed.data, 0, packed.length * widths.sum)
    pages.added(packed.length)
  }

  def finish(): Unit = {
    pages.flush()
    if (pages.rowsWritten == 0) c.addPage(col, Seq(new ByteBuf(8)), 0, 0, pages.encoding)
  }
}

/**
 * The pages of a 2.0 column whose rows are packed side by side (children of `widths` bytes):
 * rows accumulate in `buf` and go out as one `PackedStruct{inner: [Nullable(NoNull(Flat))],
 * buffer: page 0}` page per `budget` bytes. Packed structs and blob v1 descriptors (position,
 * size) are both written this way.
 */
private[writer] final class V20PackedPages(
    col: Int,
    c: ContainerWriter,
    budget: Long,
    widths: Seq[Int]
) {
  val buf = new ByteBuf(4096)
  private var rows = 0
  private var firstRow = 0L

  val encoding: ArrayEncoding = {
    val b = PackedStruct.newBuilder().setBuffer(V20ColumnWriter.buffer(0))
    widths.foreach(w => b.addInner(V20ColumnWriter.noNulls(V20ColumnWriter.flat(w * 8, 0))))
    ArrayEncoding.newBuilder().setPackedStruct(b).build()
  }

  /** Rows of the pages already written. */
  def rowsWritten: Long = firstRow

  /** Counts `n` rows just put into `buf`; writes the page once it reaches the budget. */
  def added(n: Int): Unit = { rows += n; if (buf.size.toLong >= budget) flush() }

  /** Writes the rows collected so far as a page (the container copies `buf` out at once). */
  def flush(): Unit = if (rows > 0) {
    c.addPage(col, Seq(buf), rows, firstRow, encoding)
    firstRow += rows
    rows = 0
    buf.clear()
  }
}
