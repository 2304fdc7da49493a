package io.sparklance.format.writer

import io.sparklance.LanceErrors
import io.sparklance.format._

/**
 * Struct columns written packed (`lance-encoding:packed`, or the legacy key `packed`, truthy as
 * pylance reads it: 1/true/on/yes/y): one column holding every child row-wise, row i being the
 * children's little-endian values one after another. pylance 14.0.2 writes them as
 *  - 2.0: a `PackedStruct{inner: [Nullable(NoNull(Flat)) per child], buffer}` page;
 *  - 2.1/2.2: a mini-block page with `PackedStruct{bits_per_value: [...], values: Flat(sum)}`,
 *    struct nulls in the def levels, never a constant or dictionary page.
 * The struct's own id is the column's field; its children get no column.
 *
 *  - 2.2, with string or binary children: a full-zip page of `VariablePackedStruct` rows, each
 *    the fixed children's bytes and each variable child's length (its offset width) and
 *    bytes, the children compressed as pylance compresses them per value
 *    ([[VariablePackedRows]]).
 *
 * What pylance refuses, we refuse with the column named: booleans (bit-wide children), strings
 * and binaries before 2.2, nested structs and lists, nulls in a child of a valid row, rows of
 * 256 bytes or more of a fixed-width packed struct in 2.1/2.2. Values under a null struct are
 * invisible and written as zeros (fixed) or nothing (variable). On a non-struct field pylance
 * ignores the key, and so do we.
 */
object PackedStructs {
  val Key = "lance-encoding:packed"
  val LegacyKey = "packed"

  private def truthy(v: String): Boolean =
    Set("1", "true", "on", "yes", "y").contains(v.trim.toLowerCase)

  def isPacked(f: LanceField): Boolean =
    f.logicalType == LogicalType.Struct && f.children.nonEmpty &&
      (f.metadataString(Key).exists(truthy) || f.metadataString(LegacyKey).exists(truthy))

  /** The fields that own a column, pre-order: every field, except the children of packed structs. */
  def columnFields(f: LanceField): Seq[LanceField] =
    if (isPacked(f)) Seq(f) else f +: f.children.flatMap(columnFields)

  /** Rows of the mini-block path: pylance sends wider values to full-zip, which refuses fixed-width packed structs. */
  private val MaxStructuralRowBytes = 256

  /**
   * Byte width of each child of packed struct `f`, or minus its length prefix's bytes (4, or 8
   * for large strings and binaries) for a variable-width child; refuses children pylance
   * cannot pack.
   */
  def childWidths(f: LanceField, version: FileVersion): Array[Int] = {
    def refuse(why: String): Nothing =
      throw LanceErrors.unsupported(
        s"Column '${f.name}': cannot write it as a packed struct ($Key): $why"
      )
    val widths = f.children.map { c =>
      if (c.children.nonEmpty) refuse(
        s"child '${c.name}' is a ${c.logicalType.text}; only fixed-width children can be packed"
      )
      ValueShape.ofType(c.logicalType, c) match {
        case ValueShape.Fixed(_, true) =>
          refuse(s"child '${c.name}' is boolean; Lance packs only whole-byte values")
        case ValueShape.Fixed(w, false) => w
        case ValueShape.Var if version.structural && version.minor >= 2 =>
          if (LeafValues.isLarge(c.logicalType)) -8 else -4
        case ValueShape.Var => refuse(s"child '${c.name}' is variable width; Lance packs " +
            s"variable-width children from file version 2.2 on (this is " +
            s"${version.major}.${version.minor})")
        case other =>
          refuse(s"child '${c.name}' has shape $other; only fixed-width children can be packed")
      }
    }.toArray
    if (version.structural && !isVariable(widths) && widths.sum >= MaxStructuralRowBytes)
      refuse(
        s"a row takes ${widths.sum} bytes; Lance ${version.minor}.x packs rows under $MaxStructuralRowBytes bytes only"
      )
    widths
  }

  /** Whether a packed struct of these child widths has a variable-width child. */
  def isVariable(widths: Array[Int]): Boolean = widths.exists(_ < 0)

  /** The shape of a packed struct's values: fixed-width rows, or variable when a child is. */
  def shape(f: LanceField): ValueShape =
    if (
      f.children.exists(c =>
        c.children.isEmpty &&
          scala.util.Try(ValueShape.ofType(c.logicalType, c)).toOption.contains(ValueShape.Var)
      )
    )
      ValueShape.Var
    else ValueShape.Fixed(rowWidth(f), bool = false)

  /** Bytes of one packed row, counting children that cannot be packed as 0 ([[childWidths]] refuses those). */
  def rowWidth(f: LanceField): Int = f.children.map { c =>
    if (c.children.nonEmpty) 0
    else scala.util.Try(ValueShape.ofType(c.logicalType, c)).toOption match {
      case Some(ValueShape.Fixed(w, false)) => w
      case _ => 0
    }
  }.sum

  /** Checks every packed struct of `fields` (nested ones too) before anything is written. */
  def validate(fields: Seq[LanceField], version: FileVersion): Unit =
    fields.flatMap(_.preOrder).filter(isPacked).foreach(childWidths(_, version))

  /**
   * Struct batch `a` packed row-wise into `sum(widths)`-byte values, null where the struct is.
   * A null child value in a valid row cannot be stored (the packed value has no child validity).
   */
  def pack(f: LanceField, widths: Array[Int], a: ColumnArray): ColumnArray =
    if (isVariable(widths)) VariablePackedRows.pack(f, widths, a) else packFixed(f, widths, a)

  def packFixed(f: LanceField, widths: Array[Int], a: ColumnArray): FixedWidthArray = a match {
    case s: StructArray =>
      val n = s.length
      val total = widths.sum
      val out = new Array[Byte](n * total)
      var off = 0
      var c = 0
      while (c < widths.length) {
        val w = widths(c)
        s.children(c) match {
          case child: FixedWidthArray =>
            if (child.byteWidth != w)
              throw new IllegalArgumentException(
                s"field '${f.name}': child $c has $w-byte values, got ${child.byteWidth}"
              )
            var i = 0
            while (i < n) {
              if (!s.isNull(i)) {
                if (child.isNull(i)) throw nullChild(f, c, i)
                System.arraycopy(child.data, i * w, out, i * total + off, w)
              }
              i += 1
            }
          case nulls: NullArray =>
            var i = 0
            while (i < n) { if (!s.isNull(i)) throw nullChild(f, c, i); i += 1 }
          case other =>
            throw new IllegalArgumentException(
              s"field '${f.name}': child $c is not fixed width (${other.getClass.getSimpleName})"
            )
        }
        off += w
        c += 1
      }
      new FixedWidthArray(n, s.nulls, total, out)
    case n: NullArray =>
      new FixedWidthArray(n.length, n.nulls, widths.sum, new Array[Byte](n.length * widths.sum))
    case other => throw new IllegalArgumentException(
        s"field '${f.name}' is a struct but got ${other.getClass.getSimpleName}"
      )
  }

  private[writer] def nullChild(f: LanceField, c: Int, row: Int) =
    LanceErrors.unsupported(
      s"Column '${f.name}': child '${f.children(c).name}' is null in row $row of a valid struct; " +
        s"a packed struct ($Key) cannot store null children (pylance refuses them too)"
    )
}
