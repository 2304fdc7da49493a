package io.sparklance.format

/**
 * Decoded values of one field over a run of rows, shaped like Arrow but held in plain Java
 * arrays. Decoders produce these; the Spark layer bulk-copies them into column vectors.
 * The logical type is not stored: the caller knows it from the field it asked for.
 *
 * `nulls` is null when no value is null; otherwise `nulls(i)` is true for a null row.
 */
sealed abstract class ColumnArray {
  def length: Int
  def nulls: Array[Boolean]
  final def isNull(i: Int): Boolean = nulls != null && nulls(i)
  final def hasNulls: Boolean = nulls != null
}

/**
 * Fixed-width values, little-endian, `byteWidth` bytes each, value i at `i * byteWidth`.
 * Booleans use one byte (0 or 1) per value, not bits; half floats their raw 2 bytes;
 * decimals their 16/32-byte two's complement; fixed-size binary its N bytes.
 * Null rows hold unspecified bytes.
 */
final class FixedWidthArray(
    val length: Int,
    val nulls: Array[Boolean],
    val byteWidth: Int,
    val data: Array[Byte]
) extends ColumnArray

/** Strings and binary: value i is `data[offsets(i), offsets(i+1))`. */
final class VarBinaryArray(
    val length: Int,
    val nulls: Array[Boolean],
    val offsets: Array[Int],
    val data: Array[Byte]
) extends ColumnArray

/**
 * Strings or binary kept as dictionary ids, as pylance stores low-cardinality columns: value i
 * is entry `indices(i)` of `dictionary`. Decoders produce it only for top-level columns whose
 * rows of the batch all come from dictionary pages; the Spark layer hands the ids to Spark
 * (which decodes lazily), the filter evaluator tests each entry once. Every index, null rows'
 * too, lies in `[0, dictionary.size)`, so a consumer never needs a range check per row.
 * Consumers that want plain bytes call [[ColumnArrays.materialize]].
 */
final class DictionaryArray(
    val length: Int,
    val nulls: Array[Boolean],
    val indices: Array[Int],
    val dictionary: StringDictionary
) extends ColumnArray

/** Lists, large lists and maps (a map is a list of `entries` structs): items of row i are child `[offsets(i), offsets(i+1))`. */
final class ListArray(
    val length: Int,
    val nulls: Array[Boolean],
    val offsets: Array[Int],
    val child: ColumnArray
) extends ColumnArray

/** Fixed-size lists: items of row i are child `[i * dimension, (i+1) * dimension)`. */
final class FixedSizeListArray(
    val length: Int,
    val nulls: Array[Boolean],
    val dimension: Int,
    val child: ColumnArray
) extends ColumnArray

/** Structs: one child per requested child field, in the order requested. */
final class StructArray(
    val length: Int,
    val nulls: Array[Boolean],
    val children: Array[ColumnArray]
) extends ColumnArray

/** Every row null, whatever the type: a column the file does not hold, an all-null page. */
final class NullArray(val length: Int) extends ColumnArray {
  override val nulls: Array[Boolean] = {
    val a = new Array[Boolean](length); java.util.Arrays.fill(a, true); a
  }
}
