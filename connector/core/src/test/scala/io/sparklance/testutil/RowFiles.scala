package io.sparklance.testutil

import java.io.FileOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import io.sparklance.format._
import io.sparklance.format.writer._
import io.sparklance.storage.Paths
import io.sparklance.table.Snapshot
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}

/**
 * Data files of `(id int64, n int64, v string)` rows for a dataset pylance made with that
 * schema (`update_ops.py`): written with our writer, in the dataset's own file version and
 * field ids, ready to commit as a new fragment.
 */
object RowFiles {
  final case class Row(id: Long, n: Long, v: String)

  def fragment(s: Snapshot, rows: Seq[Row]): NewFragment = {
    val fields = s.schema.fields
    require(fields.map(_.name) == Seq("id", "n", "v"), s"not an (id, n, v) dataset: $fields")
    val version = FileVersion.parse(s.dataStorageVersion).get
    val name = DataFileNames.next()
    val dir = new java.io.File(Paths.join(s.root, "data")); dir.mkdirs()
    val out = new FileOutputStream(new java.io.File(dir, name))
    val w = new LanceFileWriter(new StreamSink(out), fields, version)
    def longs(f: Row => Long): FixedWidthArray = {
      val data = new Array[Byte](8 * rows.size)
      rows.zipWithIndex.foreach { case (r, i) => codec.LittleEndian.putI64(data, 8 * i, f(r)) }
      new FixedWidthArray(rows.size, null, 8, data)
    }
    val bytes = rows.map(_.v.getBytes(UTF_8))
    val strings = new VarBinaryArray(rows.size, null, bytes.scanLeft(0)(_ + _.length).toArray,
      bytes.flatten.toArray)
    w.write(Array(longs(_.id), longs(_.n), strings))
    val f = try w.finish() finally w.close()
    NewFragment(NewDataFile(name, f.fieldIds, f.columnIndices, version.major, version.minor,
      f.sizeBytes, f.numRows))
  }
}
