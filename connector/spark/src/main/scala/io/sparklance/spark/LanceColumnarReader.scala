package io.sparklance.spark

import org.apache.spark.sql.execution.vectorized.{OnHeapColumnVector, WritableColumnVector}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}

import org.apache.spark.sql.connector.metric.CustomTaskMetric

import io.sparklance.format.{ColumnArray, LanceField}
import io.sparklance.spark.metrics._
import io.sparklance.storage.{FileIO, IoStats}
import io.sparklance.table.{DeletionVector, FragmentReader, RowFilter, RowFilterEvaluator}

/**
 * Reads one partition's fragment slices into reused on-heap column vectors, `batchSize`
 * physical rows at a time (fewer when rows are deleted or filtered out). One vector class
 * for every column keeps Spark's generated accessors monomorphic.
 *
 * With `countRows` the partition yields a single row: the number of rows that pass the
 * filter (a pushed partial COUNT(*)); only the filter's columns are decoded.
 */
class LanceColumnarReader(
    io: FileIO,
    partition: LanceInputPartition,
    fields: Seq[LanceField],
    schema: StructType,
    batchSize: Int,
    filter: Option[LanceColumnarReader.FilterSpec] = None,
    countRows: Boolean = false,
    metadata: LanceColumnarReader.MetadataSpec = LanceColumnarReader.NoMetadata,
    limit: Option[Int] = None
) extends org.apache.spark.sql.connector.read.PartitionReader[ColumnarBatch] {

  private val vectors: Array[WritableColumnVector] =
    OnHeapColumnVector.allocateColumns(
      if (countRows) 1 else batchSize,
      LanceColumnarReader.vectorSchema(schema)
    ).map(v => v: WritableColumnVector)
  private val batch = new ColumnarBatch(vectors.map(v => v: ColumnVector))
  private var sliceIndex = 0
  private var reader: FragmentReader = _
  private var counted = false
  // Task metrics: this thread's storage counters when the reader started, and our own counts.
  private val ioAtStart = { val c = IoStats.get; (c.requests, c.bytesRead) }
  private var fragmentsRead = 0L
  private var rowsSkipped = 0L
  private var rowsSkippedByIndex = 0L

  /** Rows returned so far, against a pushed LIMIT. */
  private var returned = 0L

  /** Output position of each data field (the others hold metadata columns). */
  private val dataPositions: Array[Int] = {
    val meta = metadata.columns.map(_._1).toSet
    schema.fields.indices.filterNot(meta.contains).toArray
  }
  private val wanted: Set[LanceMetadataColumns.Column] = metadata.columns.map(_._2).toSet
  private val offsets: Array[Long] =
    if (metadata.columns.isEmpty) null else new Array[Long](batchSize)
  private var values: LanceMetadataColumns.FragmentValues = _

  /** One evaluator per partition: it keeps reusable buffers, so it is never shared between tasks. */
  private val fragmentFilter: FragmentReader.Filter = filter.map { spec =>
    FragmentReader.Filter(
      new RowFilterEvaluator(spec.filter, spec.fields.map(f => f.name -> f).toMap),
      spec.fields
    )
  }.orNull

  override def next(): Boolean =
    if (countRows) {
      if (counted) false
      else {
        var total = 0L
        while (nextSlice()) total += nextKept()
        counted = true
        vectors(0).reset()
        vectors(0).putLong(0, total)
        batch.setNumRows(1)
        true
      }
    } else {
      if (limit.exists(returned >= _)) return false
      while (nextSlice()) {
        val (arrays, kept) = read()
        if (kept > 0) {
          var i = 0
          while (i < dataPositions.length) {
            val v = vectors(dataPositions(i))
            v.reset()
            ColumnVectorWriter.write(v, fields(i), arrays(i))
            i += 1
          }
          if (offsets != null) writeMetadata(kept)
          batch.setNumRows(kept)
          returned += kept
          return true
        }
      }
      false
    }

  /** True while rows remain: opens the next slice when the current one is done. */
  private def nextSlice(): Boolean = {
    while (reader == null || reader.remaining == 0) {
      if (reader != null) { reader.close(); reader = null }
      if (sliceIndex >= partition.slices.length) return false
      val s = partition.slices(sliceIndex)
      sliceIndex += 1
      fragmentsRead += 1
      // Each batch is copied into the column vectors before the next is read.
      reader = new FragmentReader(
        io,
        s.fragment,
        fields,
        DeletionVector.readShared(io, s.fragment),
        s.start,
        s.end,
        fragmentFilter,
        sharedBatches = true
      )
      if (offsets != null && (values == null || values.id != s.fragment.id))
        values = new LanceMetadataColumns.FragmentValues(s.fragment, wanted)
    }
    true
  }

  /** Fills the metadata columns for the `kept` rows of the last batch. */
  private def writeMetadata(kept: Int): Unit = {
    import LanceMetadataColumns._
    reader.keptOffsets(offsets, kept)
    val frag = values.id
    metadata.columns.foreach { case (pos, column) =>
      val v = vectors(pos)
      v.reset()
      var i = 0
      column match {
        case FragId => while (i < kept) { v.putInt(i, frag.toInt); i += 1 }
        case RowAddr => while (i < kept) { v.putLong(i, (frag << 32) | offsets(i)); i += 1 }
        case RowId =>
          val ids = values.rowIds
          if (ids == null) while (i < kept) { v.putLong(i, (frag << 32) | offsets(i)); i += 1 }
          else while (i < kept) { v.putLong(i, ids(offsets(i).toInt)); i += 1 }
        case CreatedAt =>
          val vs = values.created
          while (i < kept) { v.putLong(i, vs(offsets(i).toInt)); i += 1 }
        case UpdatedAt =>
          val vs = values.updated
          while (i < kept) { v.putLong(i, vs(offsets(i).toInt)); i += 1 }
        case other => throw new IllegalStateException(s"unknown metadata column $other")
      }
    }
  }

  /**
   * The next batch of the current slice: under a LIMIT, no more rows than are still to be
   * returned, so the last batch decodes (without a filter) and copies only those.
   */
  private def read(): (Array[ColumnArray], Int) = {
    val n = math.min(batchSize.toLong, reader.remaining).toInt
    val need = limit.fold(Int.MaxValue)(l => math.min(l - returned, Int.MaxValue).toInt)
    val out = reader.next(n, need)
    rowsSkipped += reader.lastSkipped
    if (reader.lastSkippedByIndex) rowsSkippedByIndex += reader.lastSkipped
    out
  }

  override def currentMetricsValues(): Array[CustomTaskMetric] = {
    val c = IoStats.get
    Array(
      TaskMetricValue(FragmentsRead.Name, fragmentsRead),
      TaskMetricValue(StorageRequests.Name, c.requests - ioAtStart._1),
      TaskMetricValue(StorageBytesRead.Name, c.bytesRead - ioAtStart._2),
      TaskMetricValue(RowsSkipped.Name, rowsSkipped),
      TaskMetricValue(RowsSkippedByIndex.Name, rowsSkippedByIndex)
    )
  }

  private def nextKept(): Int = read()._2

  override def get(): ColumnarBatch = batch

  override def close(): Unit = {
    if (reader != null) reader.close()
    batch.close()
  }
}

object LanceColumnarReader {

  /** Whether this Spark's column vectors take the void type (Spark 3.5's do not). */
  private lazy val vectorsTakeVoid: Boolean =
    try { new OnHeapColumnVector(1, org.apache.spark.sql.types.NullType).close(); true }
    catch { case _: RuntimeException => false }

  /**
   * The types the batch's vectors are allocated with: `schema`, but where this Spark's vectors
   * have no void type, void columns (at any depth) get boolean vectors, which the reader
   * leaves all null and Spark reads by the schema's void type.
   */
  def vectorSchema(schema: StructType): StructType = {
    import org.apache.spark.sql.types._
    def fix(t: DataType): DataType = t match {
      case NullType => BooleanType
      case s: StructType => StructType(s.fields.map(f => f.copy(dataType = fix(f.dataType))))
      case a: ArrayType => a.copy(elementType = fix(a.elementType))
      case m: MapType => m.copy(keyType = fix(m.keyType), valueType = fix(m.valueType))
      case other => other
    }
    if (vectorsTakeVoid) schema else fix(schema).asInstanceOf[StructType]
  }

  /** A pushed filter and the top-level fields it reads; travels to executors with the reader factory. */
  final case class FilterSpec(filter: RowFilter, fields: Seq[LanceField])

  /** Metadata columns to fill, by output position. */
  final case class MetadataSpec(columns: Seq[(Int, LanceMetadataColumns.Column)])

  val NoMetadata: MetadataSpec = MetadataSpec(Nil)
}
