package io.sparklance.format.blob

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.codec.{LittleEndian => LE}

/**
 * The descriptors of a run of blob values, unpacked into primitive arrays: what the table layer
 * needs to fetch the bytes. Row i is null when `isNull(i)`; otherwise its bytes are
 * `[positions(i), +sizes(i))` of the location `kinds(i)` names (v1 descriptors are all inline).
 * `uris` holds the UTF-8 `blob_uri` of v2 descriptors (null for v1).
 */
final class BlobDescriptors(
    val length: Int,
    val nulls: Array[Boolean],
    val kinds: Array[Byte],
    val positions: Array[Long],
    val sizes: Array[Long],
    val blobIds: Array[Int],
    val uris: VarBinaryArray
) {
  def isNull(i: Int): Boolean = nulls != null && nulls(i)
  def uri(i: Int): String =
    if (uris == null) ""
    else new String(uris.data, uris.offsets(i), uris.offsets(i + 1) - uris.offsets(i), "UTF-8")
}

object BlobDescriptors {

  /**
   * Unpacks the descriptor struct a file reader produced for a blob field of `version` (see
   * [[BlobColumn]]); an all-null array (a column the data file lacks) gives all-null descriptors.
   * `where` names the column for errors.
   */
  def of(array: ColumnArray, version: BlobColumn.Version, where: => String): BlobDescriptors =
    array match {
      case n: NullArray =>
        val z = n.length
        new BlobDescriptors(
          z,
          n.nulls,
          new Array[Byte](z),
          new Array[Long](z),
          new Array[Long](z),
          new Array[Int](z),
          null
        )
      case s: StructArray =>
        val want =
          if (version == BlobColumn.V1) BlobColumn.V1Children.size else BlobColumn.V2Children.size
        if (s.children.length != want)
          throw LanceErrors.corruptFile(
            where,
            s"blob v${version.number} descriptors have ${s.children.length} fields, expected $want"
          )
        val n = s.length
        def fixed(i: Int, width: Int): Array[Byte] = s.children(i) match {
          case f: FixedWidthArray if f.byteWidth == width && f.length == n => f.data
          case other => throw LanceErrors.corruptFile(
              where,
              s"blob descriptor field '${childName(version, i)}' decoded as ${describe(other)}, expected $n values of $width bytes"
            )
        }
        if (version == BlobColumn.V1) {
          new BlobDescriptors(
            n,
            s.nulls,
            new Array[Byte](n),
            LE.toLongs(fixed(0, 8), 0, n),
            LE.toLongs(fixed(1, 8), 0, n),
            new Array[Int](n),
            null
          )
        } else {
          val uris = s.children(4) match {
            case v: VarBinaryArray if v.length == n => v
            case other => throw LanceErrors.corruptFile(
                where,
                s"blob descriptor field 'blob_uri' decoded as ${describe(other)}, expected $n strings"
              )
          }
          new BlobDescriptors(
            n,
            s.nulls,
            java.util.Arrays.copyOf(fixed(0, 1), n),
            LE.toLongs(fixed(1, 8), 0, n),
            LE.toLongs(fixed(2, 8), 0, n),
            LE.toInts(fixed(3, 4), 0, n),
            uris
          )
        }
      case other =>
        throw LanceErrors.corruptFile(
          where,
          s"blob column decoded as ${describe(other)}, not a descriptor struct"
        )
    }

  /**
   * A 2.0 blob v1 column has no validity: a null row is stored as position 1, size 0 (an empty
   * value is 0, 0). Returns `descriptors` with those rows marked null.
   */
  def markV20Nulls(descriptors: StructArray): StructArray = {
    if (descriptors.children.length != 2) return descriptors
    (descriptors.children(0), descriptors.children(1)) match {
      case (p: FixedWidthArray, s: FixedWidthArray) if p.byteWidth == 8 && s.byteWidth == 8 =>
        val n = descriptors.length
        var nulls = descriptors.nulls
        var i = 0
        while (i < n) {
          if (LE.i64(p.data, i * 8) == 1L && LE.i64(s.data, i * 8) == 0L) {
            if (nulls == null) nulls = new Array[Boolean](n)
            nulls(i) = true
          }
          i += 1
        }
        if (nulls eq descriptors.nulls) descriptors
        else new StructArray(n, nulls, descriptors.children)
      case _ => descriptors
    }
  }

  private def childName(v: BlobColumn.Version, i: Int): String =
    (if (v == BlobColumn.V1) BlobColumn.V1Children else BlobColumn.V2Children).lift(i).getOrElse(
      i.toString
    )

  private def describe(a: ColumnArray): String = a match {
    case f: FixedWidthArray => s"${f.length} values of ${f.byteWidth} bytes"
    case other => s"${other.getClass.getSimpleName} of ${other.length} rows"
  }
}
