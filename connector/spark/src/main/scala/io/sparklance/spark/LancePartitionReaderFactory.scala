package io.sparklance.spark

import org.apache.spark.broadcast.Broadcast
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader, PartitionReaderFactory}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.ColumnarBatch

import io.sparklance.format.LanceField
import io.sparklance.storage.FileIO

/**
 * Creates columnar readers on executors; storage settings travel once, as a broadcast, and
 * each partition brings its row filter. A pushed TopN reads in two passes
 * ([[LanceTopNReader]]).
 */
class LancePartitionReaderFactory(
    private[spark] val io: Broadcast[FileIO],
    fields: Seq[LanceField],
    schema: StructType,
    batchSize: Int,
    countRows: Boolean,
    metadata: LanceColumnarReader.MetadataSpec = LanceColumnarReader.NoMetadata,
    limit: Option[Int] = None,
    topN: Option[TopNSpec] = None
) extends PartitionReaderFactory {

  override def supportColumnarReads(partition: InputPartition): Boolean = true

  override def createColumnarReader(partition: InputPartition): PartitionReader[ColumnarBatch] = {
    val part = partition.asInstanceOf[LanceInputPartition]
    MetadataCacheConf()
    topN match {
      case Some(t) =>
        new LanceTopNReader(io.value, part, fields, schema, batchSize, metadata, t)
      case None => new LanceColumnarReader(
          io.value,
          part,
          fields,
          schema,
          batchSize,
          part.rowFilter,
          countRows,
          metadata,
          limit
        )
    }
  }

  override def createReader(partition: InputPartition): PartitionReader[InternalRow] =
    throw new UnsupportedOperationException("Lance scans are columnar only")
}
