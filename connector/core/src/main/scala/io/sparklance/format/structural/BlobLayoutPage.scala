package io.sparklance.format.structural

import scala.jdk.CollectionConverters._

import io.sparklance.format.{FixedWidthArray, StructArray}
import io.sparklance.format.blob.BlobColumn
import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos.BlobLayout

/**
 * A page of a blob v1 column in a 2.1 (or 2.2) file: `BlobLayout{inner_layout, layers}`. The
 * inner page holds one all-valid `struct<position: u64, size: u64>` per row; the bytes are
 * elsewhere in the file and fetched by the table layer. The column's rep/def levels are not
 * stored as levels: pylance smuggles them into the descriptors (lance-encoding
 * `BlobStructuralEncoder`), a row with size 0 and position != 0 carrying `def << 16 | rep` in
 * its position, interpreted through the outer `layers`. An empty value is (0, 0).
 *
 * This decoder reads the inner page into its own batch, rebuilds the levels from the
 * descriptors and appends levels and descriptors to the column's batch. Every row of a column
 * outside lists owns a value slot, null or not, so every descriptor is appended.
 */
private[structural] final class BlobLayoutPage(
    blob: BlobLayout,
    io: PageIO,
    rows: Long,
    minor: Int,
    layers: Layers,
    from: Long,
    until: Long,
    ref: PageRef
) extends PageDecoder {

  // A blob inside a list would need the smuggled repetition levels to find rows; pylance cannot
  // fetch such blobs either (take_blobs addresses top-level rows).
  if (layers.maxRep > 0) throw ref.unsupported("blob columns inside lists are not supported")
  ref.check(blob.hasInnerLayout, "blob page has no inner layout")
  private val defMap: Array[Short] = layers.pageDefMap(blob.getLayersList.asScala.toArray, ref)

  private val innerLayers = new Layers(Array(false))
  private val innerBatch = new LeafBatch(innerLayers, BlobBuilders.descriptors(BlobColumn.V1))
  private val inner: PageDecoder = PageDecoders.openLayout(
    blob.getInnerLayout,
    io,
    rows,
    minor,
    innerLayers,
    innerBatch.values,
    false,
    from,
    until,
    ref
  )

  def skip(k: Int): Unit = inner.skip(k)

  def read(k: Int, out: LeafBatch): Unit = {
    innerBatch.reset()
    inner.read(k, innerBatch)
    val (positions, sizes) = innerBatch.values.result(null) match {
      case s: StructArray if s.length == k && s.children.length == 2 =>
        (s.children(0), s.children(1)) match {
          case (p: FixedWidthArray, z: FixedWidthArray) if p.byteWidth == 8 && z.byteWidth == 8 =>
            (p.data, z.data)
          case _ => throw ref.corrupt("blob descriptors are not two 64-bit fields")
        }
      case other => throw ref.corrupt(
          s"blob descriptors decoded to ${other.length} rows of ${other.getClass.getSimpleName}, expected $k structs"
        )
    }
    var defs: Array[Short] = null
    var i = 0
    while (i < k) {
      val size = LE.i64(sizes, i * 8)
      val pos = LE.i64(positions, i * 8)
      if (size == 0 && pos != 0) {
        val rep = pos & 0xffff
        val d = ((pos >>> 16) & 0xffff).toInt
        ref.check(
          rep == 0 && (pos >>> 32) == 0,
          s"blob row ${from + i} has size 0 and position $pos, which is no definition level"
        )
        ref.check(
          d < defMap.length,
          s"blob row ${from + i} carries definition level $d but the page's layers define ${defMap.length - 1}"
        )
        if (defs == null) defs = new Array[Short](k)
        defs(i) = d.toShort
      }
      i += 1
    }
    out.appendLevels(null, defs, defMap, 0, k)
    out.values.append(
      new StructValues(
        k,
        Array(new FixedValues(k, 8, positions, 0), new FixedValues(k, 8, sizes, 0))
      ),
      0,
      k
    )
  }
}

/** Value builders for the descriptor struct a blob column decodes to (see [[BlobColumn]]). */
private[structural] object BlobBuilders {
  def descriptors(version: BlobColumn.Version): ValuesBuilder = version match {
    case BlobColumn.V1 => new StructBuilder(Array(new FixedBuilder(8), new FixedBuilder(8)))
    case BlobColumn.V2 =>
      new StructBuilder(Array(
        new FixedBuilder(1),
        new FixedBuilder(8),
        new FixedBuilder(8),
        new FixedBuilder(4),
        new VarBuilder
      ))
  }
}
