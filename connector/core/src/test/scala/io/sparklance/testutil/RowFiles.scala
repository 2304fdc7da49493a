package io.sparklance.testutil

import java.io.FileOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import io.sparklance.format._
import io.sparklance.format.writer._
import io.sparklance.storage.{Paths, StreamSink}
import io.sparklance.table.Snapshot
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}

/**
 * Data files for datasets pylance made of int64 and string columns (`update_ops.py`):
 * rows given by column name, written with our writer in the dataset's own file version and
 * field ids, ready to commit as a new fragment.
 */
object RowFiles {
  type Row = Map[String, Any]

  def row(id: Long, n: Long): Row = Map("id" -> id, "n" -> n, "v" -> s"r$id")

  def fragment(s: Snapshot, rows: Seq[Row]): NewFragment = {
    val fields = s.schema.fields
    val version = FileVersion.parse(s.dataStorageVersion).get
    val name = DataFileNames.next()
    val dir = new java.io.File(Paths.join(s.root, "data")); dir.mkdirs()
    val out = new FileOutputStream(new java.io.File(dir, name))
    val w = new LanceFileWriter(new StreamSink(out), fields, version)
    val columns: Array[ColumnArray] = fields.map { f =>
      f.logicalType match {
        // A column the rows do not name (added later, all null).
        case LogicalType.Int32 | LogicalType.Int64 if !rows.exists(_.contains(f.name)) =>
          val width = if (f.logicalType == LogicalType.Int32) 4 else 8
          new FixedWidthArray(
            rows.size,
            Array.fill(rows.size)(true),
            width,
            new Array[Byte](width * rows.size)
          ): ColumnArray
        case LogicalType.Int64 =>
          val data = new Array[Byte](8 * rows.size)
          rows.zipWithIndex.foreach { case (r, i) =>
            codec.LittleEndian.putI64(data, 8 * i, r(f.name).asInstanceOf[Long])
          }
          new FixedWidthArray(rows.size, null, 8, data): ColumnArray
        case LogicalType.Int32 =>
          val data = new Array[Byte](4 * rows.size)
          rows.zipWithIndex.foreach { case (r, i) =>
            codec.LittleEndian.putI32(data, 4 * i, r(f.name).asInstanceOf[Number].intValue)
          }
          new FixedWidthArray(rows.size, null, 4, data): ColumnArray
        case LogicalType.Utf8 =>
          val bytes = rows.map(_(f.name).toString.getBytes(UTF_8))
          new VarBinaryArray(
            rows.size,
            null,
            bytes.scanLeft(0)(_ + _.length).toArray,
            bytes.flatten.toArray
          ): ColumnArray
        case other => throw new IllegalArgumentException(s"column ${f.name}: $other")
      }
    }.toArray
    w.write(columns)
    val f =
      try w.finish()
      finally w.close()
    NewFragment(NewDataFile(
      name,
      f.fieldIds,
      f.columnIndices,
      version.major,
      version.minor,
      f.sizeBytes,
      f.numRows
    ))
  }

  /** One int64 column's data file of `values`, in the dataset's file version. */
  def column(s: Snapshot, field: LanceField, values: Seq[Long]): NewDataFile = {
    val version = FileVersion.parse(s.dataStorageVersion).get
    val name = DataFileNames.next()
    val dir = new java.io.File(Paths.join(s.root, "data")); dir.mkdirs()
    val w = new LanceFileWriter(
      new StreamSink(new FileOutputStream(new java.io.File(dir, name))),
      Seq(field),
      version
    )
    val data = new Array[Byte](8 * values.size)
    values.zipWithIndex.foreach { case (v, i) => codec.LittleEndian.putI64(data, 8 * i, v) }
    w.write(Array(new FixedWidthArray(values.size, null, 8, data)))
    val f =
      try w.finish()
      finally w.close()
    NewDataFile(
      name,
      f.fieldIds,
      f.columnIndices,
      version.major,
      version.minor,
      f.sizeBytes,
      f.numRows
    )
  }
}
