package io.sparklance.table

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.LanceErrors
import io.sparklance.proto.{RowIdProtos, TableProtos}

/**
 * Stable row ids and per-row version sequences of a fragment (`rowids.proto`): decoding the
 * segment kinds pylance writes (range, range with holes, range with bitmap, sorted array,
 * array) into one `Long` per physical row, and encoding ids back compactly.
 */
object RowIdSequences {

  /** The stable row id of every physical row of `f`, or None when the fragment has none. */
  def rowIds(f: TableProtos.DataFragment): Option[Array[Long]] =
    if (!f.hasInlineRowIds) {
      if (f.hasExternalRowIds || f.hasColumnRowIds)
        throw LanceErrors.unsupported(s"fragment ${f.getId} keeps its row ids outside the " +
          "manifest, which this connector does not read yet")
      None
    } else Some(decode(RowIdProtos.RowIdSequence.parseFrom(f.getInlineRowIds)))

  def decode(s: RowIdProtos.RowIdSequence): Array[Long] = {
    val out = Array.newBuilder[Long]
    s.getSegmentsList.asScala.foreach(seg => out ++= values(seg))
    out.result()
  }

  /** The values one segment stands for, in order. */
  def values(seg: RowIdProtos.U64Segment): Array[Long] = {
    import RowIdProtos.U64Segment.SegmentCase._
    seg.getSegmentCase match {
      case RANGE => range(seg.getRange.getStart, seg.getRange.getEnd)
      case RANGE_WITH_HOLES =>
        val r = seg.getRangeWithHoles
        val holes = array(r.getHoles).toSet
        range(r.getStart, r.getEnd).filterNot(holes.contains)
      case RANGE_WITH_BITMAP =>
        val r = seg.getRangeWithBitmap
        val bits = r.getBitmap.toByteArray
        range(r.getStart, r.getEnd).filter { v =>
          val i = (v - r.getStart).toInt
          (bits(i >>> 3) & (1 << (i & 7))) != 0
        }
      case SORTED_ARRAY => array(seg.getSortedArray)
      case ARRAY => array(seg.getArray)
      case SEGMENT_NOT_SET => Array.emptyLongArray
    }
  }

  private def range(start: Long, end: Long): Array[Long] = {
    val n = end - start
    if (n < 0 || n > Int.MaxValue) throw LanceErrors.unsupported(s"row id range $start..$end")
    val a = new Array[Long](n.toInt)
    var i = 0
    while (i < a.length) { a(i) = start + i; i += 1 }
    a
  }

  private def array(e: RowIdProtos.EncodedU64Array): Array[Long] = {
    import RowIdProtos.EncodedU64Array.ArrayCase._
    def le(b: Array[Byte], at: Int, width: Int): Long = {
      var v = 0L
      var k = width - 1
      while (k >= 0) { v = (v << 8) | (b(at + k) & 0xffL); k -= 1 }
      v
    }
    def read(base: Long, bytes: Array[Byte], width: Int): Array[Long] =
      Array.tabulate(bytes.length / width)(i => base + le(bytes, i * width, width))
    e.getArrayCase match {
      case U16_ARRAY => read(e.getU16Array.getBase, e.getU16Array.getOffsets.toByteArray, 2)
      case U32_ARRAY => read(e.getU32Array.getBase, e.getU32Array.getOffsets.toByteArray, 4)
      case U64_ARRAY => read(0L, e.getU64Array.getValues.toByteArray, 8)
      case ARRAY_NOT_SET => Array.emptyLongArray
    }
  }

  /**
   * Encodes ids as a sequence: one `range` per run of consecutive ids; when the ids are
   * scattered (more runs than a quarter of the ids) one `array` segment of u64 values.
   */
  def encode(ids: Array[Long]): RowIdProtos.RowIdSequence = {
    val b = RowIdProtos.RowIdSequence.newBuilder()
    if (ids.isEmpty) return b.build()
    var runs = 1
    var i = 1
    while (i < ids.length) { if (ids(i) != ids(i - 1) + 1) runs += 1; i += 1 }
    if (runs <= math.max(1, ids.length / 4)) {
      var start = 0
      i = 1
      while (i <= ids.length) {
        if (i == ids.length || ids(i) != ids(i - 1) + 1) {
          b.addSegments(rangeSegment(ids(start), ids(i - 1) + 1))
          start = i
        }
        i += 1
      }
    } else {
      val bytes = new Array[Byte](8 * ids.length)
      i = 0
      while (i < ids.length) {
        var k = 0
        while (k < 8) { bytes(8 * i + k) = (ids(i) >>> (8 * k)).toByte; k += 1 }
        i += 1
      }
      val arr = RowIdProtos.EncodedU64Array.newBuilder().setU64Array(
        RowIdProtos.EncodedU64Array.U64Array.newBuilder().setValues(ByteString.copyFrom(bytes))
      )
      b.addSegments(RowIdProtos.U64Segment.newBuilder().setArray(arr))
    }
    b.build()
  }

  def rangeSegment(start: Long, end: Long): RowIdProtos.U64Segment =
    RowIdProtos.U64Segment.newBuilder()
      .setRange(RowIdProtos.U64Segment.Range.newBuilder().setStart(start).setEnd(end)).build()

  /**
   * The version of every physical row of a fragment from a run-length version sequence
   * (`inline_created_at_versions` / `inline_last_updated_at_versions`). Runs apply in order,
   * each to as many rows as its span holds (Lance's `RowDatasetVersionSequence::versions`):
   * a compaction concatenates the runs of the old fragments, spans and all, so a span is a
   * length, not a set of offsets. Rows no run reaches get `default` (pylance's value for
   * fragments written before version tracking: 1).
   */
  def versions(bytes: ByteString, rows: Int, default: Long): Array[Long] = {
    val out = Array.fill(rows)(default)
    if (bytes != null && !bytes.isEmpty) {
      var at = 0
      RowIdProtos.RowDatasetVersionSequence.parseFrom(bytes).getRunsList.asScala.foreach { r =>
        val n = spanLength(r.getSpan)
        var i = 0L
        while (i < n && at < rows) { out(at) = r.getVersion; at += 1; i += 1 }
      }
    }
    out
  }

  /** How many values a segment stands for. */
  def spanLength(seg: RowIdProtos.U64Segment): Long =
    if (seg.getSegmentCase == RowIdProtos.U64Segment.SegmentCase.RANGE)
      seg.getRange.getEnd - seg.getRange.getStart
    else RowIdSequences.values(seg).length.toLong

  /** Run-length encodes per-row versions (offsets 0..n-1) as pylance does: one run per change. */
  def encodeVersions(vs: Array[Long]): ByteString = {
    val b = RowIdProtos.RowDatasetVersionSequence.newBuilder()
    var start = 0
    var i = 1
    while (i <= vs.length) {
      if (i == vs.length || vs(i) != vs(start)) {
        b.addRuns(RowIdProtos.RowDatasetVersionRun.newBuilder()
          .setSpan(rangeSegment(start, i)).setVersion(vs(start)))
        start = i
      }
      i += 1
    }
    b.build().toByteString
  }
}
