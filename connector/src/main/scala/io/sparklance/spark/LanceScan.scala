package io.sparklance.spark

import java.util.OptionalLong

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read._
import org.apache.spark.sql.types.StructType

import io.sparklance.format.LanceField
import io.sparklance.table.{FragmentRef, RowCounts}

/**
 * A columnar scan of one dataset version. The version (and so the fragment list) was fixed
 * when the table was loaded; planning splits and packs fragments into partitions, and each
 * partition decodes straight into Spark column vectors.
 */
class LanceScan(table: LanceTable, required: StructType) extends Scan with Batch with SupportsReportStatistics {

  /** The requested columns as Lance fields, pruned to the nested children Spark asked for. */
  private val fields: Seq[LanceField] = required.fields.toSeq.map { sf =>
    val f = table.snapshot.schema.field(sf.name).getOrElse(
      throw new IllegalStateException(s"Spark asked for column '${sf.name}', which ${table.name()} lacks"))
    SchemaConverter.prune(f, sf.dataType)
  }

  private lazy val fragments: Seq[FragmentRef] = table.snapshot.fragments.map(FragmentRef(table.snapshot.root, table.snapshot, _))

  override def readSchema(): StructType = required
  override def description(): String =
    s"LanceScan ${table.name()} [${required.fieldNames.mkString(", ")}]"
  override def toBatch: Batch = this
  override def columnarSupportMode(): Scan.ColumnarSupportMode = Scan.ColumnarSupportMode.SUPPORTED

  override def planInputPartitions(): Array[InputPartition] =
    SplitPlanner.plan(table.io, fragments, table.options.splitSizeBytes, LanceTables.openCostBytes, fields).toArray

  override def createReaderFactory(): PartitionReaderFactory = {
    val io = SparkSession.active.sparkContext.broadcast(table.io)
    new LancePartitionReaderFactory(io, fields, required, table.options.batchSize)
  }

  override def estimateStatistics(): Statistics = new Statistics {
    override def numRows(): OptionalLong = OptionalLong.of(fragments.map(f => f.physicalRows - f.numDeletedRows).sum)
    override def sizeInBytes(): OptionalLong = {
      val total = fragments.map(f => SplitPlanner.estimatedBytes(f)).sum
      // Scale by the share of columns read: a pruned scan reads fewer bytes.
      val all = table.schema().fields.length.max(1)
      OptionalLong.of(math.max(1L, total * math.max(1, required.fields.length) / all))
    }
  }
}
