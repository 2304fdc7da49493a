package io.sparklance.table.txn

import java.io.ByteArrayOutputStream
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.channels.Channels

import scala.jdk.CollectionConverters._

import org.apache.arrow.memory.RootAllocator
import org.apache.arrow.vector.{UInt4Vector, VectorSchemaRoot}
import org.apache.arrow.vector.ipc.ArrowFileWriter
import org.apache.arrow.vector.types.pojo.{ArrowType, Field, FieldType, Schema}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.proto.TableProtos
import io.sparklance.table.DeletionVector

/**
 * Writes a fragment's deletion vector as pylance 14 does (lance-table `io/deletion.rs`):
 *  - fewer than 5000 deleted rows: an Arrow IPC file of one `row_id: uint32 not null` column,
 *    no schema metadata (Lance's reader rejects any other schema);
 *  - 5000 or more: the portable 32-bit Roaring serialization (`.bin`).
 * Files are never rewritten: every change writes a new file holding the whole vector,
 * named `{fragment_id}-{read_version}-{random u64}` so concurrent writers never collide.
 */
object DeletionFileWriter {

  /** Lance's `BITMAP_THRESDHOLD`: at this many deletions the vector is a bitmap. */
  val BitmapThreshold = 5000

  private val random = new java.security.SecureRandom()

  /** `asBitmap` forces the Roaring form whatever the count (see `Delete` for when pylance does). */
  def write(
      io: FileIO,
      root: String,
      fragmentId: Long,
      readVersion: Long,
      deleted: RoaringBitmap,
      asBitmap: Boolean = false
  ): TableProtos.DeletionFile = {
    val n = deleted.getLongCardinality
    val kind =
      if (asBitmap || n >= BitmapThreshold) TableProtos.DeletionFile.DeletionFileType.BITMAP
      else TableProtos.DeletionFile.DeletionFileType.ARROW_ARRAY
    val file = TableProtos.DeletionFile.newBuilder()
      .setFileType(kind).setReadVersion(readVersion).setId(random.nextLong()).setNumDeletedRows(n)
      .build()
    val isBitmap = kind == TableProtos.DeletionFile.DeletionFileType.BITMAP
    val bytes = if (isBitmap) bitmap(deleted) else arrow(deleted)
    val path = DeletionVector.path(root, fragmentId, file)
    // A fresh random name: an existing file is a 1-in-2^64 collision, never a file to replace.
    if (!io.createIfAbsent(path, bytes))
      throw new java.io.IOException(s"deletion file $path already exists")
    file
  }

  private def bitmap(deleted: RoaringBitmap): Array[Byte] = {
    val copy = deleted.clone()
    copy.runOptimize()
    val buf = ByteBuffer.allocate(copy.serializedSizeInBytes()).order(ByteOrder.LITTLE_ENDIAN)
    copy.serialize(buf)
    buf.array()
  }

  private val schema = new Schema(
    Seq(new Field("row_id", FieldType.notNullable(new ArrowType.Int(32, false)), null)).asJava
  )

  private def arrow(deleted: RoaringBitmap): Array[Byte] = {
    val allocator = new RootAllocator(Long.MaxValue)
    try {
      val vsr = VectorSchemaRoot.create(schema, allocator)
      try {
        val v = vsr.getVector(0).asInstanceOf[UInt4Vector]
        val n = deleted.getCardinality
        v.allocateNew(n)
        var i = 0
        val it = deleted.getIntIterator
        while (it.hasNext) { v.set(i, it.next()); i += 1 }
        v.setValueCount(n)
        vsr.setRowCount(n)
        val out = new ByteArrayOutputStream()
        val w = new ArrowFileWriter(vsr, null, Channels.newChannel(out))
        try { w.start(); w.writeBatch(); w.end() }
        finally w.close()
        out.toByteArray
      } finally vsr.close()
    } finally allocator.close()
  }
}
