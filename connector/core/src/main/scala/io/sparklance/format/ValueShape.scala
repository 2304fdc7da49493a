package io.sparklance.format

import io.sparklance.LanceErrors

/**
 * The physical shape a field decodes to, derived once from its logical type so decoders can
 * match on it once per page instead of re-inspecting the Lance type per value.
 */
sealed trait ValueShape

object ValueShape {

  /** Every value null (Lance `null` type). */
  case object Nulls extends ValueShape

  /** Fixed-width little-endian values; `bool` ones are stored as bits on disk, one byte each in memory. */
  final case class Fixed(byteWidth: Int, bool: Boolean) extends ValueShape

  /** Strings and binaries. */
  case object Var extends ValueShape
  final case class FixedList(dimension: Int, item: ValueShape) extends ValueShape
  final case class Struct(children: Seq[(LanceField, ValueShape)]) extends ValueShape
  final case class VarList(item: LanceField, itemShape: ValueShape) extends ValueShape

  /** The shape of a (possibly pruned) dataset field. */
  def of(field: LanceField): ValueShape = field.logicalType match {
    case LogicalType.Struct => Struct(field.children.map(c => c -> of(c)))
    case LogicalType.List | LogicalType.LargeList | LogicalType.Map | _: LogicalType.ListOfStruct =>
      if (field.children.size != 1)
        throw LanceErrors.unsupportedType(
          field.name,
          field.logicalType.text,
          s"a list needs exactly one child, found ${field.children.size}"
        )
      VarList(field.children.head, of(field.children.head))
    case t => ofType(t, field)
  }

  def ofType(t: LogicalType, field: LanceField): ValueShape = {
    import LogicalType._
    t match {
      case Null => Nulls
      case Bool => Fixed(1, bool = true)
      case Int8 | UInt8 => Fixed(1, bool = false)
      case Int16 | UInt16 | Float16 | BFloat16 => Fixed(2, bool = false)
      case Int32 | UInt32 | Float32 | Date32 => Fixed(4, bool = false)
      case Int64 | UInt64 | Float64 | Date64 | _: Duration | _: Timestamp => Fixed(8, bool = false)
      case tt: Time => Fixed(tt.bitWidth / 8, bool = false)
      case d: Decimal => Fixed(d.bitWidth / 8, bool = false)
      case FixedSizeBinary(w) => Fixed(w, bool = false)
      case Utf8 | LargeUtf8 | Binary | LargeBinary | Json => Var
      case FixedSizeList(item, dim) => FixedList(dim, ofType(item, field))
      case Dictionary(value, _, _) => ofType(value, field)
      case other =>
        throw LanceErrors.unsupportedType(field.name, other.text, "it is not a leaf type")
    }
  }
}
