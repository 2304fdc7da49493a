package io.sparklance.table

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.FilterValue.LongValue
import io.sparklance.table.RowFilter.Compare
import io.sparklance.testutil.Fixtures

/**
 * `FragmentReader.next(n, maxKept)`, what a scan under a LIMIT asks for, on fragment 0 of the
 * deletions_bitmap fixtures (8192 rows, id = physical offset, only the 1024 with id % 8 = 3
 * live; `v` random in [0, 1000), `s` short strings): the rows are the first `maxKept` that
 * `next(n)` keeps; without a filter only the physical rows holding them are read, and the
 * fragment's later rows follow unchanged.
 */
class FragmentReaderLimitSuite extends AnyFunSuite {
  private lazy val fileIO = HadoopFileIO.local()
  private val Batch = 1000

  private def open(fmt: String, filter: RowFilter = null): FragmentReader = {
    val snap = LanceDataset.open(fileIO, Fixtures(s"deletions_bitmap_$fmt").path.toString)
      .open(VersionSpec.Latest)
    val byName = snap.schema.fields.map(f => f.name -> f).toMap
    val f = if (filter == null) null
    else FragmentReader.Filter(
      new RowFilterEvaluator(filter, byName),
      filter.columns.toSeq.map(byName)
    )
    val frag = FragmentRef(snap.root, snap, snap.fragments.head)
    assert(frag.physicalRows == 8192)
    new FragmentReader(
      fileIO,
      frag,
      Seq("id", "v", "s").map(byName),
      DeletionVector.read(fileIO, frag),
      0,
      frag.physicalRows,
      f
    )
  }

  /** The kept rows as (id, v, s), and the physical offsets the reader says they have. */
  private def rows(
      r: FragmentReader,
      out: (Array[ColumnArray], Int)
  ): (Seq[(Long, Option[Int], Option[String])], Seq[Long]) = {
    val (arrays, kept) = out
    if (kept == 0) return (Nil, Nil)
    val id = arrays(0).asInstanceOf[FixedWidthArray]
    val v = arrays(1).asInstanceOf[FixedWidthArray]
    val s = ColumnArrays.materialize(arrays(2)).asInstanceOf[VarBinaryArray]
    assert(id.length == kept && v.length == kept && s.length == kept)
    val values = (0 until kept).map { i =>
      (
        codec.LittleEndian.i64(id.data, 8 * i),
        if (v.isNull(i)) None else Some(codec.LittleEndian.i32(v.data, 4 * i)),
        if (s.isNull(i)) None
        else Some(new String(s.data, s.offsets(i), s.offsets(i + 1) - s.offsets(i), UTF_8))
      )
    }
    val offsets = new Array[Long](kept)
    r.keptOffsets(offsets, kept)
    (values, offsets.toSeq)
  }

  /** The rest of the fragment, read with plain `next`. */
  private def drain(r: FragmentReader): Seq[(Long, Option[Int], Option[String])] = {
    val out = Seq.newBuilder[(Long, Option[Int], Option[String])]
    while (r.remaining > 0) out ++= rows(r, r.next(math.min(Batch.toLong, r.remaining).toInt))._1
    out.result()
  }

  for (fmt <- Seq("legacy", "2.0", "2.1", "2.2")) {
    test(s"deletions_bitmap_$fmt: at most maxKept rows, from only the physical rows they need") {
      val whole = open(fmt)
      val all =
        try drain(whole)
        finally whole.close()
      assert(all.size == 1024 && all.forall(_._1 % 8 == 3))
      val inBatch = all.count(_._1 < Batch) // 125
      for (maxKept <- Seq(1, 5, 124, 125, 126, 5000)) {
        val r = open(fmt)
        try {
          val (got, offsets) = rows(r, r.next(Batch, maxKept))
          val k = math.min(maxKept, inBatch)
          assert(got == all.take(k), s"maxKept $maxKept")
          assert(offsets == got.map(_._1))
          val consumed = 8192 - r.remaining
          // Up to the last row returned (its id is its offset), or the whole batch when short.
          assert(consumed == (if (maxKept <= inBatch) got.last._1 + 1 else Batch.toLong))
          assert(r.lastSkipped == consumed - k)
          assert(got ++ drain(r) == all, s"maxKept $maxKept: rows after the limited read")
        } finally r.close()
      }
    }

    test(s"deletions_bitmap_$fmt with a filter: the first maxKept rows passing, the batch read") {
      val filter = Compare("v", CompareOp.GtEq, LongValue(500))
      val whole = open(fmt, filter)
      val (first, skipped) =
        try {
          val out = rows(whole, whole.next(Batch))._1
          (out, whole.lastSkipped)
        } finally whole.close()
      assert(first.size > 40 && first.forall(_._2.exists(_ >= 500)))
      assert(skipped == Batch - first.size)
      for (maxKept <- Seq(1, 5, 40, first.size, 5000)) {
        val r = open(fmt, filter)
        try {
          val (got, offsets) = rows(r, r.next(Batch, maxKept))
          assert(got == first.take(maxKept), s"maxKept $maxKept")
          assert(offsets == got.map(_._1))
          assert(r.remaining == 8192 - Batch)
          assert(r.lastSkipped == skipped)
        } finally r.close()
      }
    }
  }

  test("maxKept must be positive") {
    val r = open("2.2")
    try intercept[IllegalArgumentException](r.next(Batch, 0))
    finally r.close()
  }
}
