package io.sparklance.testutil

import java.io.FileOutputStream

import io.sparklance.format._
import io.sparklance.format.writer._
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table._
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}

/** Datasets of one `id: int64` column, written and read by this connector (commit suites). */
object TinyDatasets {
  val fields: Seq[LanceField] =
    Seq(LanceField(0, -1, "id", LogicalType.Int64, nullable = false, Map.empty, Nil))

  def newRoot(): String = TempDirs.create("lance-commit-").resolve("ds").toString

  /** Writes a data file of `ids` under `root/data` and returns it as a fragment to commit. */
  def fragment(
      root: String,
      ids: Seq[Long],
      version: FileVersion = FileVersion.V2_2
  ): NewFragment = {
    val name = DataFileNames.next()
    val dir = new java.io.File(Paths.join(root, "data")); dir.mkdirs()
    val out = new FileOutputStream(new java.io.File(dir, name))
    val w = new LanceFileWriter(new StreamSink(out), fields, version)
    val data = new Array[Byte](8 * ids.size)
    ids.zipWithIndex.foreach { case (v, i) => codec.LittleEndian.putI64(data, 8 * i, v) }
    w.write(Array(new FixedWidthArray(ids.size, null, 8, data)))
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

  def latest(io: FileIO, root: String): Snapshot =
    LanceDataset.open(io, root).open(VersionSpec.Latest)

  /** The live ids of `s`, in fragment order. */
  def ids(io: FileIO, s: Snapshot): Seq[Long] = s.fragments.flatMap { fr =>
    val ref = FragmentRef(s.root, s, fr)
    val dv = DeletionVector.read(io, ref)
    val r = new FragmentReader(io, ref, s.schema.fields, dv, 0, ref.physicalRows)
    try {
      val (arrays, n) = r.next(ref.physicalRows.toInt)
      val a = arrays(0).asInstanceOf[FixedWidthArray]
      (0 until n).map(i => codec.LittleEndian.i64(a.data, 8 * i))
    } finally r.close()
  }
}
