package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write._

class LanceDataWriterFactory(plan: TaskPlan) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] =
    new LanceDataWriter(plan)
}
