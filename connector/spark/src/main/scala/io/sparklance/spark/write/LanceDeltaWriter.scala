package io.sparklance.spark.write

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DeltaWriter, WriterCommitMessage}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.table.txn.KeyBloom

/**
 * One task's share of a row-level operation, merge-on-read as pylance's update and
 * merge_insert do it: a deleted row is only remembered (its `_rowaddr`); an updated row is
 * remembered and written again, with its new values, to a new data file, keeping its
 * `_rowid`; an inserted row is written to a file of its own (it gets a fresh row id at
 * commit). Nothing is committed here: the driver turns every task's report into one Lance
 * transaction.
 */
class LanceDeltaWriter(plan: TaskPlan, keys: Option[InsertedKeyColumns] = None)
    extends DeltaWriter[InternalRow] {
  private val removed = mutable.HashMap.empty[Long, RoaringBitmap]
  private lazy val rewrites = new LanceDataWriter(plan)
  private lazy val inserts = new LanceDataWriter(plan)
  private var wroteRewrites, wroteInserts = false
  private var keptIds = new Array[Long](1024)
  private var keptCount = 0

  /** `id` holds `_rowaddr`; `metadata` holds `_rowid`. */
  override def delete(metadata: InternalRow, id: InternalRow): Unit = remove(id.getLong(0))

  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit = {
    remove(id.getLong(0))
    if (keptCount == keptIds.length) keptIds = java.util.Arrays.copyOf(keptIds, keptCount * 2)
    keptIds(keptCount) = metadata.getLong(0)
    keptCount += 1
    rewrites.write(row)
    wroteRewrites = true
  }

  private val bloom = keys.map(_ => new KeyBloom())

  override def insert(row: InternalRow): Unit = {
    inserts.write(row)
    wroteInserts = true
    keys.foreach(k => k.keyOf(row).foreach(bloom.get.add))
  }

  private def remove(addr: Long): Unit =
    removed.getOrElseUpdate(addr >>> 32, new RoaringBitmap()).add((addr & 0xffffffffL).toInt)

  override def commit(): WriterCommitMessage = {
    val rewritten = if (!wroteRewrites) Nil
    else {
      val files = rewrites.commit().asInstanceOf[LanceTaskCommit].files
      var at = 0
      files.map { f =>
        val ids = java.util.Arrays.copyOfRange(keptIds, at, at + f.rows.toInt)
        at += f.rows.toInt
        f -> ids
      }
    }
    val inserted = if (!wroteInserts) Nil else inserts.commit().asInstanceOf[LanceTaskCommit].files
    LanceDeltaTaskCommit(
      removed.map { case (f, b) => f -> LanceDeltaWriter.bytes(b) }.toMap,
      rewritten,
      inserted,
      bloom.map(_.bytes)
    )
  }

  override def abort(): Unit = {
    if (wroteRewrites) rewrites.abort()
    if (wroteInserts) inserts.abort()
  }

  override def close(): Unit = {
    if (wroteRewrites) rewrites.close()
    if (wroteInserts) inserts.close()
  }
}

object LanceDeltaWriter {
  def bytes(b: RoaringBitmap): Array[Byte] = {
    b.runOptimize()
    val out = new java.io.ByteArrayOutputStream()
    b.serialize(new java.io.DataOutputStream(out))
    out.toByteArray
  }

  def bitmap(bytes: Array[Byte]): RoaringBitmap = {
    val b = new RoaringBitmap()
    b.deserialize(new java.io.DataInputStream(new java.io.ByteArrayInputStream(bytes)))
    b
  }
}
