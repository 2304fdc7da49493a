package io.sparklance.spark

import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types.StructType
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.spark.metrics.RowsSkipped
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{FilterValue, FragmentRef, LanceDataset, RowFilter, VersionSpec}
import io.sparklance.testutil.Fixtures

/**
 * [[LanceColumnarReader]] under a pushed LIMIT, on fragment 0 of the deletions_bitmap fixtures
 * (8192 rows, id = physical offset, the 1024 with id % 8 = 3 live): it returns the first live
 * rows, and its last batch reads (without a filter) and copies only the rows it returns.
 */
class ColumnarReaderLimitSuite extends AnyFunSuite {
  private lazy val fileIO = HadoopFileIO.local()
  private val Batch = 256

  /**
   * The ids returned, the rows skipped, and whether each batch's string vector held only the
   * bytes of its rows.
   */
  private def read(
      fmt: String,
      limit: Int,
      filter: RowFilter = null
  ): (Seq[Long], Long, Boolean) = {
    val snap = LanceDataset.open(fileIO, Fixtures(s"deletions_bitmap_$fmt").path.toString)
      .open(VersionSpec.Latest)
    val byName = snap.schema.fields.map(f => f.name -> f).toMap
    val fields = Seq(byName("id"), byName("s"))
    val schema = StructType(fields.map(SchemaConverter.toSparkField))
    val frag = FragmentRef(snap.root, snap, snap.fragments.head)
    val part = LanceInputPartition(Array(FragmentSlice(frag, 0, frag.physicalRows)))
    val spec = Option(filter)
      .map(f => LanceColumnarReader.FilterSpec(f, f.columns.toSeq.map(byName)))
    val r = new LanceColumnarReader(fileIO, part, fields, schema, Batch, spec, limit = Some(limit))
    try {
      val ids = Seq.newBuilder[Long]
      var onlyReturned = true
      while (r.next()) {
        val b = r.get()
        (0 until b.numRows()).foreach(i => ids += b.column(0).getLong(i))
        val s = b.column(1).asInstanceOf[WritableColumnVector]
        // Plain string vectors hold the bytes appended; those of the returned rows alone.
        if (!s.hasDictionary) {
          val bytes = (0 until b.numRows()).filterNot(s.isNullAt)
            .map(s.getUTF8String(_).numBytes).sum
          onlyReturned &&= s.arrayData().getElementsAppended == bytes
        }
      }
      val skipped = r.currentMetricsValues().find(_.name == RowsSkipped.Name).get.value
      (ids.result(), skipped, onlyReturned)
    } finally r.close()
  }

  for (fmt <- Seq("legacy", "2.0", "2.1", "2.2")) {
    test(s"deletions_bitmap_$fmt: a LIMIT reads and copies only the rows it returns") {
      for (limit <- Seq(1, 7, 40, 300)) {
        val (ids, skipped, onlyReturned) = read(fmt, limit)
        assert(ids == (0 until limit).map(i => 8L * i + 3), s"limit $limit")
        // The physical rows read end at the last row returned: ids before it are the deleted.
        assert(skipped == ids.last + 1 - limit, s"limit $limit")
        assert(onlyReturned, s"limit $limit")
      }
    }

    test(s"deletions_bitmap_$fmt: a LIMIT over a filter returns its first rows passing") {
      val filter =
        RowFilter.Compare("id", io.sparklance.table.CompareOp.GtEq, FilterValue.LongValue(1000))
      for (limit <- Seq(1, 7, 40)) {
        val (ids, _, onlyReturned) = read(fmt, limit, filter)
        assert(ids == (0 until limit).map(i => 1000L + 8 * i + 3), s"limit $limit")
        assert(onlyReturned, s"limit $limit")
      }
    }
  }
}
