package io.sparklance.spark

import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import io.sparklance.format.LanceField
import io.sparklance.io.FileIO
import io.sparklance.table.{DeletionVector, FragmentReader}

/**
 * Reads one partition's fragment slices into reused on-heap column vectors, `batchSize`
 * physical rows at a time (fewer when rows are deleted). One vector class for every column
 * keeps Spark's generated accessors monomorphic.
 */
class LanceColumnarReader(
    io: FileIO,
    partition: LanceInputPartition,
    fields: Seq[LanceField],
    schema: StructType,
    batchSize: Int) extends org.apache.spark.sql.connector.read.PartitionReader[ColumnarBatch] {

  private val vectors: Array[WritableColumnVector] =
    OnHeapColumnVector.allocateColumns(batchSize, schema).map(v => v: WritableColumnVector)
  private val batch = new ColumnarBatch(vectors.map(v => v: ColumnVector))
  private var sliceIndex = 0
  private var reader: FragmentReader = _

  override def next(): Boolean = {
    while (true) {
      if (reader == null || reader.remaining == 0) {
        if (reader != null) { reader.close(); reader = null }
        if (sliceIndex >= partition.slices.length) return false
        val s = partition.slices(sliceIndex)
        sliceIndex += 1
        reader = new FragmentReader(io, s.fragment, fields, DeletionVector.read(io, s.fragment), s.start, s.end)
      }
      val n = math.min(batchSize.toLong, reader.remaining).toInt
      val (arrays, kept) = reader.next(n)
      if (kept > 0) {
        var i = 0
        while (i < vectors.length) {
          vectors(i).reset()
          ColumnVectorWriter.write(vectors(i), fields(i), arrays(i))
          i += 1
        }
        batch.setNumRows(kept)
        return true
      }
    }
    false
  }

  override def get(): ColumnarBatch = batch

  override def close(): Unit = {
    if (reader != null) reader.close()
    batch.close()
  }
}
