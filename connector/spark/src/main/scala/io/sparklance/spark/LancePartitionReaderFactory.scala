package io.sparklance.spark

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

import io.sparklance.format.LanceField
import io.sparklance.storage.FileIO

/** Creates columnar readers on executors; storage settings travel once, as a broadcast. */
class LancePartitionReaderFactory(
    io: Broadcast[FileIO],
    fields: Seq[LanceField],
    schema: StructType,
    batchSize: Int,
    filter: Option[LanceColumnarReader.FilterSpec],
    countRows: Boolean,
    metadata: LanceColumnarReader.MetadataSpec = LanceColumnarReader.NoMetadata,
    limit: Option[Int] = None)
  extends PartitionReaderFactory {

  override def supportColumnarReads(partition: InputPartition): Boolean = true

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] =
    new LanceColumnarReader(io.value, partition.asInstanceOf[LanceInputPartition], fields, schema,
      batchSize, filter, countRows, metadata, limit)

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    throw new UnsupportedOperationException("Lance scans are columnar only")
}
