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
private[writer] final class V20PackedStructWriter(f: LanceField, col: Int, c: ContainerWriter, budget: Long)
  extends V20ColumnWriter {
  private val widths = PackedStructs.childWidths(f, FileVersion.V2_0)
  private val rowBytes = widths.sum
  private val data = new ByteBuf(4096)
  private var rows = 0
  private var firstRow = 0L

  private val encoding: ArrayEncoding = {
    val b = PackedStruct.newBuilder().setBuffer(V20ColumnWriter.buffer(0))
    widths.foreach(w => b.addInner(V20ColumnWriter.noNulls(V20ColumnWriter.flat(w * 8, 0))))
    ArrayEncoding.newBuilder().setPackedStruct(b).build()
  }

  def append(a: ColumnArray): Unit = {
    if (a.hasNulls && a.nulls.exists(identity))
      throw LanceErrors.unsupported(
        s"Column '${f.name}' holds null structs, which Lance file version 2.0 cannot store; write with data_storage_version 2.1 or later")
    val packed = PackedStructs.pack(f, widths, a)
    data.bytes(packed.data, 0, packed.length * rowBytes)
    rows += packed.length
    if (data.size.toLong >= budget) flush()
  }

  private def flush(): Unit = if (rows > 0) {
    val b = new ByteBuf(data.size + 8)
    b.bytes(data.array, 0, data.size)
    c.addPage(col, Seq(b), rows, firstRow, encoding)
    firstRow += rows
    rows = 0
    data.clear()
  }

  def finish(): Unit = {
    flush()
    if (firstRow == 0) c.addPage(col, Seq(new ByteBuf(8)), 0, 0, encoding)
  }
}
