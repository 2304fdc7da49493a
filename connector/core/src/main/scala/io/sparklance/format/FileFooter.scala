package io.sparklance.format

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.LanceErrors

/**
 * The last 40 bytes of a Lance v2 file (2.0, 2.1, 2.2), little-endian:
 * {{{
 *   u64 column_meta_start  u64 cmo_table_start  u64 gbo_table_start
 *   u32 num_global_buffers u32 num_columns      u16 major  u16 minor  "LANC"
 * }}}
 * Legacy (0.1) files end in `i64 metadata_pos | i16 major | i16 minor | "LANC"`; both
 * share the last 8 bytes, which is how the version is told before anything else is parsed.
 */
final case class FileFooter(
    columnMetaStart: Long,
    cmoTableStart: Long,
    gboTableStart: Long,
    numGlobalBuffers: Int,
    numColumns: Int,
    major: Int,
    minor: Int
)

object FileFooter {
  val Length = 40
  val Magic: Array[Byte] = "LANC".getBytes("US-ASCII")

  /** (major, minor) from the last 8 bytes of any Lance file. */
  def version(tail: Array[Byte], path: String): (Int, Int) = {
    val n = tail.length
    if (n < 8) throw LanceErrors.corruptFile(path, s"file is only $n bytes")
    checkMagic(tail, path)
    val b = ByteBuffer.wrap(tail, n - 8, 4).order(ByteOrder.LITTLE_ENDIAN)
    (b.getShort() & 0xffff, b.getShort() & 0xffff)
  }

  /** Parses the v2 footer from the file's tail (at least the last 40 bytes). */
  def parse(tail: Array[Byte], fileSize: Long, path: String): FileFooter = {
    val n = tail.length
    if (n < Length) throw LanceErrors.corruptFile(
      path,
      s"file is only $n bytes, shorter than the $Length-byte footer"
    )
    checkMagic(tail, path)
    val b = ByteBuffer.wrap(tail, n - Length, Length).order(ByteOrder.LITTLE_ENDIAN)
    val f = FileFooter(
      b.getLong(),
      b.getLong(),
      b.getLong(),
      b.getInt(),
      b.getInt(),
      b.getShort() & 0xffff,
      b.getShort() & 0xffff
    )
    val end = fileSize - Length
    def check(ok: Boolean, what: String): Unit =
      if (!ok) throw LanceErrors.corruptFile(path, s"footer: $what")
    check(f.numColumns >= 0 && f.numGlobalBuffers >= 0, "negative column or buffer count")
    check(
      f.columnMetaStart >= 0 && f.columnMetaStart <= end,
      s"column metadata start ${f.columnMetaStart} outside the file"
    )
    check(
      f.cmoTableStart >= 0 && f.cmoTableStart + 16L * f.numColumns <= end,
      s"column offset table at ${f.cmoTableStart} outside the file"
    )
    check(
      f.gboTableStart >= 0 && f.gboTableStart + 16L * f.numGlobalBuffers <= end,
      s"global buffer table at ${f.gboTableStart} outside the file"
    )
    f
  }

  private def checkMagic(tail: Array[Byte], path: String): Unit = {
    val n = tail.length
    if (tail(n - 4) != 'L' || tail(n - 3) != 'A' || tail(n - 2) != 'N' || tail(n - 1) != 'C')
      throw LanceErrors.corruptFile(path, "missing LANC magic at end of file")
  }
}
