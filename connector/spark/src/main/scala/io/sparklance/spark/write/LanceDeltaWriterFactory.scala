package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DeltaWriter, DeltaWriterFactory}

class LanceDeltaWriterFactory(plan: TaskPlan, keys: Option[InsertedKeyColumns] = None)
    extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] =
    new LanceDeltaWriter(plan, keys)
}
