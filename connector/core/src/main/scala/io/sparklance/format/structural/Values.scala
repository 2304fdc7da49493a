package io.sparklance.format.structural

/**
 * Decoded values of a run of visible items (one mini-block chunk, one full-zip range, one
 * constant). Decoders produce these; [[ValuesBuilder]]s copy ranges of them into a batch.
 * They may reference the page buffer they came from (no copy), hence the offsets.
 */
private[structural] sealed abstract class Values { def count: Int }

/** Value i is bytes [off + i*width, off + (i+1)*width) of `data`. */
private[structural] final class FixedValues(
    val count: Int,
    val width: Int,
    val data: Array[Byte],
    val off: Int
) extends Values

/** Value i is data[offsets(offOff+i), offsets(offOff+i+1)). */
private[structural] final class VarValues(
    val count: Int,
    val offsets: Array[Int],
    val offOff: Int,
    val data: Array[Byte]
) extends Values

/** Fixed-size lists: `child` holds count*dim items; `itemNulls` (or null) marks null items. */
private[structural] final class FslValues(
    val count: Int,
    val dim: Int,
    val itemNulls: Array[Boolean],
    val child: Values
) extends Values

/** Packed structs: one child per struct field, each with `count` values. */
private[structural] final class StructValues(val count: Int, val children: Array[Values])
    extends Values

/** The same value `count` times (constant pages); `scalar` has one value, or is null for all-null pages. */
private[structural] final class ConstantValues(val count: Int, val scalar: Values) extends Values

/** Values looked up in a dictionary: value i is dictionary(indices(i)). */
private[structural] final class DictValues(
    val count: Int,
    val indices: Array[Int],
    val dictionary: Values
) extends Values
