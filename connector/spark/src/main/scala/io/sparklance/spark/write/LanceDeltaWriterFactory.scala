package io.sparklance.spark.write

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.sql.connector.write.{DeltaWriter, DeltaWriterFactory, WriterCommitMessage}
import org.roaringbitmap.RoaringBitmap

import io.sparklance.table.commit.NewDataFile
import io.sparklance.table.txn.KeyBloom

class LanceDeltaWriterFactory(plan: TaskPlan, keys: Option[InsertedKeyColumns] = None)
    extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] =
    new LanceDeltaWriter(plan, keys)
}
