package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}

import org.roaringbitmap.RoaringBitmap

import io.sparklance.LanceErrors

/**
 * Lance's row-address tree map as BITMAP and LABEL_LIST indices store it (one per value): a
 * u32 count, then per fragment its id (u32), the byte length (u32) of a portable Roaring
 * bitmap of row offsets — 0 meaning every row of the fragment — and the bitmap.
 */
private[index] object RowAddrTreeMap {

  /** The entries of `bytes`: fragment id and its bitmap's bytes (empty: every row). */
  def entries(bytes: Array[Byte]): Iterator[(Long, Array[Byte])] =
    if (bytes.isEmpty) Iterator.empty
    else {
      val in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN)
      val n = in.getInt()
      Iterator.fill(n) {
        val frag = in.getInt() & 0xffffffffL
        val entry = new Array[Byte](in.getInt())
        in.get(entry)
        frag -> entry
      }
    }

  /** An entry's row offsets; None for an empty entry (every row of the fragment). */
  def offsets(entry: Array[Byte], frag: Long, file: String): Option[RoaringBitmap] =
    if (entry.isEmpty) None
    else {
      val b = new RoaringBitmap()
      try b.deserialize(ByteBuffer.wrap(entry))
      catch {
        case e: Exception => throw LanceErrors.corruptFile(
            file,
            s"a bitmap of fragment $frag does not decode: ${e.getMessage}",
            e
          )
      }
      Some(b)
    }
}
