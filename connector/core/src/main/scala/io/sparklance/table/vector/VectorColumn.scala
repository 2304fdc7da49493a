package io.sparklance.table.vector

import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.storage.FileIO
import io.sparklance.table.{DeletionVector, FragmentReader, FragmentRef, LiveRows, Snapshot}

/**
 * A table's vector column (`fixed_size_list` of float16, float32 or float64), read for exact
 * distances: whole fragments (the ones an index does not cover) or a refine step's chosen
 * rows. Deleted rows are never read; null vectors are never returned (as pylance).
 */
final class VectorColumn(val field: LanceField, val dim: Int, item: LogicalType)
    extends Serializable {
  private val Batch = 8192

  /** Refuses a query vector `q` (the `q` argument) of another dimension than the column's. */
  def checkQuery(q: Array[Float]): Unit =
    if (q.length != dim) throw LanceErrors.invalidOption(
      "q",
      s"${q.length} values",
      s"column ${field.name} holds vectors of $dim"
    )

  /**
   * Offers the exact distance of every row of `f` with a vector to `top`; deleted rows are
   * not read, and rows `live` (an allow-list) refuses are skipped.
   */
  def scan(
      io: FileIO,
      f: FragmentRef,
      q: Array[Float],
      metric: VectorMetric,
      top: TopK,
      live: LiveRows
  ): Unit = {
    val check = live.allowed.isDefined
    val reader =
      new FragmentReader(io, f, Seq(field), DeletionVector.read(io, f), 0L, f.physicalRows)
    try {
      distancesOf(reader, f.id, q, metric) { (d, address) =>
        if (!check || live.contains(address)) top.offer(d.toFloat, address)
      }
    } finally reader.close()
  }

  /**
   * As [[scan]] for many queries at once: the fragment is read once, and every row's exact
   * distance to `qs(i)` offered to `tops(i)`.
   */
  def scanMany(
      io: FileIO,
      f: FragmentRef,
      qs: Array[Array[Float]],
      metric: VectorMetric,
      tops: Array[TopK],
      live: LiveRows
  ): Unit = {
    val check = live.allowed.isDefined
    val reader =
      new FragmentReader(io, f, Seq(field), DeletionVector.read(io, f), 0L, f.physicalRows)
    try {
      vectorsOf(reader, f.id) { (v, at, address) =>
        if (!check || live.contains(address)) {
          var j = 0
          while (j < qs.length) {
            val d = metric.distance(qs(j), v, at, dim)
            if (!d.isNaN) tops(j).offer(d, address)
            j += 1
          }
        }
      }
    } finally reader.close()
  }

  /**
   * The exact distances to `q` of the rows at `addresses` of fragment `f` (sorted physical
   * offsets), read in runs of nearby rows; rows deleted or with a null vector are left out.
   */
  def distances(
      io: FileIO,
      f: FragmentRef,
      offsets: Array[Long],
      q: Array[Float],
      metric: VectorMetric
  ): Seq[(Float, Long)] = {
    val deletions = DeletionVector.read(io, f)
    val wanted = offsets.map((f.id << 32) | _).toSet
    val out = Seq.newBuilder[(Float, Long)]
    var i = 0
    while (i < offsets.length) {
      var j = i
      while (j + 1 < offsets.length && offsets(j + 1) - offsets(j) <= 1024) j += 1
      val reader = new FragmentReader(io, f, Seq(field), deletions, offsets(i), offsets(j) + 1)
      try {
        distancesOf(reader, f.id, q, metric) { (d, address) =>
          if (wanted(address)) out += ((d.toFloat, address))
        }
      } finally reader.close()
      i = j + 1
    }
    out.result()
  }

  /**
   * Hands `emit` the exact distance to `q` and the row address of every row `reader` keeps
   * with a non-null vector (NaN distances left out), batch by batch. (The distance is passed
   * as a double: a (Double, Long) function is specialized, with no boxing per row.)
   */
  private def distancesOf(
      reader: FragmentReader,
      fragment: Long,
      q: Array[Float],
      metric: VectorMetric
  )(emit: (Double, Long) => Unit): Unit =
    vectorsOf(reader, fragment) { (v, at, address) =>
      val d = metric.distance(q, v, at, dim)
      if (!d.isNaN) emit(d, address)
    }

  /**
   * Hands `visit` every non-null vector `reader` keeps, batch by batch: the batch's vectors as
   * floats, where the row's vector starts in them, and its row address.
   */
  private def vectorsOf(reader: FragmentReader, fragment: Long)(
      visit: VectorColumn.Visitor
  ): Unit = {
    val offsets = new Array[Long](Batch)
    while (reader.remaining > 0) {
      val (cols, kept) = reader.next(math.min(Batch.toLong, reader.remaining).toInt)
      if (kept > 0) {
        reader.keptOffsets(offsets, kept)
        val a = cols(0)
        val v = values(a, kept)
        var i = 0
        while (i < kept) {
          if (!a.isNull(i)) visit.vector(v, i * dim, (fragment << 32) | offsets(i))
          i += 1
        }
      }
    }
  }

  /** The `n` vectors of a decoded batch as floats, row after row (nulls' values unspecified). */
  private def values(a: ColumnArray, n: Int): Array[Float] = a match {
    case fsl: FixedSizeListArray => fsl.child match {
        case c: FixedWidthArray =>
          val out = new Array[Float](n * dim)
          val b = ByteBuffer.wrap(c.data).order(ByteOrder.LITTLE_ENDIAN)
          item match {
            case LogicalType.Float32 => b.asFloatBuffer().get(out, 0, n * dim)
            case LogicalType.Float64 =>
              var i = 0
              while (i < n * dim) { out(i) = b.getDouble(i * 8).toFloat; i += 1 }
            case _ =>
              var i = 0
              while (i < n * dim) { out(i) = HalfFloat.toFloat(b.getShort(i * 2)); i += 1 }
          }
          out
        case _ => throw LanceErrors.unsupportedType(
            field.name,
            field.logicalType.text,
            "a vector column's items must be numbers"
          )
      }
    case _: NullArray => new Array[Float](n * dim)
    case _ =>
      throw LanceErrors.unsupportedType(field.name, field.logicalType.text, "not a fixed-size list")
  }
}

object VectorColumn {

  /** What a scan does with each vector (primitive arguments: no boxing per row). */
  private trait Visitor {
    def vector(values: Array[Float], at: Int, address: Long): Unit
  }

  /** The vector column `name` of `s`, failing with a clear message when it is not one. */
  def apply(s: Snapshot, name: String): VectorColumn = {
    val f = s.schema.field(name).getOrElse(throw LanceErrors.invalidOption(
      "column",
      name,
      s"no column $name in ${s.root} (columns: ${s.schema.fields.map(_.name).mkString(", ")})"
    ))
    f.logicalType match {
      case LogicalType.FixedSizeList(
            item @ (LogicalType.Float32 | LogicalType.Float64 |
            LogicalType.Float16),
            dim
          ) => new VectorColumn(f, dim, item)
      case t => throw LanceErrors.unsupportedType(
          name,
          t.text,
          "vector search needs a fixed_size_list of float16, float32 or float64"
        )
    }
  }
}
