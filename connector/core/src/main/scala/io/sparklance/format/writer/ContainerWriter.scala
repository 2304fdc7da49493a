package io.sparklance.format.writer

import java.nio.{ByteBuffer, ByteOrder}

import scala.collection.mutable.ArrayBuffer

import com.google.protobuf.ByteString

import io.sparklance.proto.{File2Protos, FileProtos}
import io.sparklance.storage.OutputSink

/**
 * The v2 file container (2.0, 2.1, 2.2), written in the reference writer's order: page
 * buffers as they are produced (each starting on a 64-byte boundary, padded with 0x48), then
 * global buffer 0 (the FileDescriptor), the column metadatas, the column-metadata offset
 * table, the global-buffer offset table and the 40-byte footer.
 */
final class ContainerWriter(sink: OutputSink, version: FileVersion, numColumns: Int) {
  import ContainerWriter._

  private val pages = Array.fill(numColumns)(ArrayBuffer[File2Protos.ColumnMetadata.Page]())

  /** Each column's page encodings and buffer counts, as written: what [[PageTypeGuard]] checks. */
  private val written = Array.fill(numColumns)(ArrayBuffer[(com.google.protobuf.Message, Int)]())

  /** The encodings and buffer counts of column `col`'s pages so far. */
  def pagesOf(col: Int): Seq[(com.google.protobuf.Message, Int)] = written(col).toSeq

  /** Column-level encodings other than the default `ColumnEncoding{values}` (2.0 blob columns). */
  private val columnEncodings = new Array[File2Protos.Encoding](numColumns)

  /** Sets column `col`'s column-level encoding (a `lance.encodings.ColumnEncoding`). */
  def setColumnEncoding(col: Int, encoding: com.google.protobuf.Message): Unit =
    columnEncodings(col) = direct(encoding)
  private val padding = Array.fill[Byte](Alignment)(Pad)

  private def align(): Unit = {
    val p = ((Alignment - (sink.position % Alignment)) % Alignment).toInt
    if (p > 0) sink.write(padding, 0, p)
  }

  /** Writes one page buffer at the next 64-byte boundary; returns its position. */
  def writeBuffer(b: Array[Byte], off: Int, len: Int): Long = {
    align()
    val pos = sink.position
    sink.write(b, off, len)
    pos
  }

  /** Writes the buffers of one page and records the page (rows `[firstRow, firstRow + rows)`) in column `col`. */
  def addPage(
      col: Int,
      buffers: Seq[ByteBuf],
      rows: Long,
      firstRow: Long,
      encoding: com.google.protobuf.Message
  ): Unit = {
    val p = File2Protos.ColumnMetadata.Page.newBuilder()
    buffers.foreach { b =>
      val pos = writeBuffer(b.array, 0, b.size)
      p.addBufferOffsets(pos).addBufferSizes(b.size.toLong)
    }
    p.setLength(rows).setPriority(firstRow).setEncoding(direct(encoding))
    pages(col) += p.build()
    written(col) += encoding -> buffers.size
  }

  /** Records a page with no buffers (a 2.0 struct column, a constant page). */
  def addEmptyPage(
      col: Int,
      rows: Long,
      firstRow: Long,
      encoding: com.google.protobuf.Message
  ): Unit =
    addPage(col, Nil, rows, firstRow, encoding)

  /**
   * Writes the metadata and footer; returns the file size. Does not close the sink.
   * `extraGlobalBuffers` become global buffers 1, 2, … after the descriptor (index files keep
   * their models there).
   */
  def finish(
      descriptor: FileProtos.FileDescriptor,
      extraGlobalBuffers: Seq[Array[Byte]] = Nil
  ): Long = {
    align()
    val gb0 = descriptor.toByteArray
    val globals = (gb0 +: extraGlobalBuffers).map { b =>
      align()
      val pos = sink.position
      sink.write(b)
      (pos, b.length.toLong)
    }
    val columnEncoding = direct(ColumnEncodingAny)
    val cmo = new Array[(Long, Long)](numColumns)
    val columnMetaStart = sink.position
    var c = 0
    while (c < numColumns) {
      val m = File2Protos.ColumnMetadata.newBuilder()
        .setEncoding(if (columnEncodings(c) != null) columnEncodings(c) else columnEncoding)
      pages(c).foreach(m.addPages)
      val bytes = m.build().toByteArray
      cmo(c) = (sink.position, bytes.length.toLong)
      sink.write(bytes)
      c += 1
    }
    val cmoStart = sink.position
    val t = ByteBuffer.allocate(16 * numColumns).order(ByteOrder.LITTLE_ENDIAN)
    cmo.foreach { case (p, l) => t.putLong(p); t.putLong(l) }
    sink.write(t.array())
    val gboStart = sink.position
    val g = ByteBuffer.allocate(16 * globals.size).order(ByteOrder.LITTLE_ENDIAN)
    globals.foreach { case (p, l) => g.putLong(p); g.putLong(l) }
    sink.write(g.array())
    val f = ByteBuffer.allocate(40).order(ByteOrder.LITTLE_ENDIAN)
    f.putLong(columnMetaStart); f.putLong(cmoStart); f.putLong(gboStart)
    f.putInt(globals.size); f.putInt(numColumns)
    f.putShort(version.footerMajor.toShort); f.putShort(version.footerMinor.toShort)
    f.put("LANC".getBytes("US-ASCII"))
    sink.write(f.array())
    sink.position
  }
}

object ContainerWriter {
  val Alignment = 64
  val Pad: Byte = 0x48

  /** `google.protobuf.Any` wrapping, as Lance stores encodings: type URL "/" + full message name. */
  def any(m: com.google.protobuf.Message): com.google.protobuf.Any =
    com.google.protobuf.Any.newBuilder()
      .setTypeUrl("/" + m.getDescriptorForType.getFullName)
      .setValue(m.toByteString)
      .build()

  def direct(m: com.google.protobuf.Message): File2Protos.Encoding = direct(any(m))

  private def direct(a: com.google.protobuf.Any): File2Protos.Encoding =
    File2Protos.Encoding.newBuilder()
      .setDirect(File2Protos.DirectEncoding.newBuilder().setEncoding(a.toByteString))
      .build()

  /** The column-level encoding every column carries: `ColumnEncoding{values: Empty}`, bytes `0a 00`. */
  private val ColumnEncodingAny: com.google.protobuf.Any =
    com.google.protobuf.Any.newBuilder()
      .setTypeUrl("/lance.encodings.ColumnEncoding")
      .setValue(ByteString.copyFrom(Array[Byte](0x0a, 0x00)))
      .build()
}
