package io.sparklance.format

import io.sparklance.LanceErrors

/**
 * The Lance logical type of a field, parsed from `Field.logical_type`. The string grammar
 * (see PROTOCOL.md, "Logical types") is Lance's; this is its typed form. Nested types
 * (struct, list, map) carry no child types here: their children are separate fields.
 */
sealed trait LogicalType extends Serializable {

  /** The Lance string this type was parsed from; `LogicalType.parse(t.text) == t`. */
  def text: String

  /** A list of variable length: list, large_list or a list of structs. */
  def isVariableList: Boolean = this match {
    case LogicalType.List | LogicalType.LargeList | _: LogicalType.ListOfStruct => true
    case _ => false
  }

  /** A repetition layer of the structural encoding: a variable list or a map. */
  def isRepeated: Boolean = isVariableList || this == LogicalType.Map

  /** Several values a row: a repetition layer or a fixed-size list. */
  def isMultiValued: Boolean = isRepeated || isInstanceOf[LogicalType.FixedSizeList]
}

object LogicalType {
  sealed abstract class Simple(val text: String) extends LogicalType
  case object Null extends Simple("null")
  case object Bool extends Simple("bool")
  case object Int8 extends Simple("int8")
  case object Int16 extends Simple("int16")
  case object Int32 extends Simple("int32")
  case object Int64 extends Simple("int64")
  case object UInt8 extends Simple("uint8")
  case object UInt16 extends Simple("uint16")
  case object UInt32 extends Simple("uint32")
  case object UInt64 extends Simple("uint64")
  case object Float16 extends Simple("halffloat")
  case object Float32 extends Simple("float")
  case object Float64 extends Simple("double")

  /** bfloat16, only ever as the item of a fixed-size list (`fixed_size_list:lance.bfloat16:N`). */
  case object BFloat16 extends Simple("lance.bfloat16")
  case object Utf8 extends Simple("string")
  case object LargeUtf8 extends Simple("large_string")
  case object Binary extends Simple("binary")
  case object LargeBinary extends Simple("large_binary")

  /** Physically large_binary holding JSONB bytes. */
  case object Json extends Simple("json")
  case object Date32 extends Simple("date32:day")
  case object Date64 extends Simple("date64:ms")
  case object Struct extends Simple("struct")
  case object List extends Simple("list")
  case object LargeList extends Simple("large_list")
  case object Map extends Simple("map")

  sealed abstract class TimeUnit(val symbol: String, val perSecond: Long) extends Serializable
  object TimeUnit {
    case object Second extends TimeUnit("s", 1L)
    case object Milli extends TimeUnit("ms", 1000L)
    case object Micro extends TimeUnit("us", 1000000L)
    case object Nano extends TimeUnit("ns", 1000000000L)
    val all: Seq[TimeUnit] = Seq(Second, Milli, Micro, Nano)
    def parse(s: String, whole: String): TimeUnit =
      all.find(_.symbol == s).getOrElse(throw LanceErrors.badLogicalType(
        whole,
        s"unknown time unit '$s'"
      ))
  }

  /** time32 (s, ms) or time64 (us, ns): time of day. */
  final case class Time(unit: TimeUnit) extends LogicalType {
    def bitWidth: Int = if (unit == TimeUnit.Second || unit == TimeUnit.Milli) 32 else 64
    override def text: String = s"time$bitWidth:${unit.symbol}"
  }
  final case class Duration(unit: TimeUnit) extends LogicalType {
    override def text: String = s"duration:${unit.symbol}"
  }

  /** `timeZone` None means a zone-less (local) timestamp, written as "-". */
  final case class Timestamp(unit: TimeUnit, timeZone: Option[String]) extends LogicalType {
    override def text: String = s"timestamp:${unit.symbol}:${timeZone.getOrElse("-")}"
  }
  final case class Decimal(bitWidth: Int, precision: Int, scale: Int) extends LogicalType {
    override def text: String = s"decimal:$bitWidth:$precision:$scale"
  }
  final case class FixedSizeBinary(byteWidth: Int) extends LogicalType {
    override def text: String = s"fixed_size_binary:$byteWidth"
  }

  /** A fixed-size list of a leaf type; Lance stores it as one field with no child. */
  final case class FixedSizeList(item: LogicalType, dimension: Int) extends LogicalType {
    override def text: String = s"fixed_size_list:${item.text}:$dimension"
  }

  /** Dictionary-encoded values (legacy files); reads as its value type. */
  final case class Dictionary(value: LogicalType, index: LogicalType, ordered: Boolean)
      extends LogicalType {
    override def text: String = s"dict:${value.text}:${index.text}:$ordered"
  }

  /** "list.struct" / "large_list.struct": a list whose item is a struct. */
  final case class ListOfStruct(large: Boolean) extends LogicalType {
    override def text: String = if (large) "large_list.struct" else "list.struct"
  }

  private val simple: scala.collection.immutable.Map[String, LogicalType] =
    Seq[Simple](
      Null,
      Bool,
      Int8,
      Int16,
      Int32,
      Int64,
      UInt8,
      UInt16,
      UInt32,
      UInt64,
      Float16,
      Float32,
      Float64,
      BFloat16,
      Utf8,
      LargeUtf8,
      Binary,
      LargeBinary,
      Json,
      Date32,
      Date64,
      Struct,
      List,
      LargeList,
      Map
    )
      .map(t => t.text -> t).toMap ++
      scala.collection.immutable.Map(
        "list.struct" -> ListOfStruct(false),
        "large_list.struct" -> ListOfStruct(true)
      )

  def parse(text: String): LogicalType = simple.get(text) match {
    case Some(t) => t
    case None => parseCompound(text)
  }

  private def parseCompound(text: String): LogicalType = {
    def bad(why: String) = LanceErrors.badLogicalType(text, why)
    def int(s: String, what: String): Int =
      try s.toInt
      catch { case _: NumberFormatException => throw bad(s"$what '$s' is not an integer") }
    val parts = text.split(":", -1)
    parts(0) match {
      case "time32" | "time64" if parts.length == 2 =>
        val t = Time(TimeUnit.parse(parts(1), text))
        if (s"time${t.bitWidth}" != parts(0)) throw bad("time unit does not match its width")
        t
      case "duration" if parts.length == 2 => Duration(TimeUnit.parse(parts(1), text))
      case "timestamp" if parts.length >= 3 =>
        // The zone may itself contain ':' ("+05:00"), so it is everything after the unit.
        val zone = text.split(":", 3)(2)
        Timestamp(TimeUnit.parse(parts(1), text), if (zone == "-") None else Some(zone))
      case "decimal" if parts.length == 4 =>
        val bits = int(parts(1), "decimal width")
        if (bits != 128 && bits != 256) throw bad(s"decimal width must be 128 or 256")
        Decimal(bits, int(parts(2), "precision"), int(parts(3), "scale"))
      case "fixed_size_binary" if parts.length == 2 => FixedSizeBinary(int(parts(1), "byte width"))
      case "fixed_size_list" if parts.length >= 3 =>
        // The dimension is the last token; the item type may nest and contain ':'.
        val dim = int(parts.last, "dimension")
        if (dim < 0) throw bad("negative dimension")
        FixedSizeList(parse(parts.slice(1, parts.length - 1).mkString(":")), dim)
      case "dict" if parts.length == 4 =>
        Dictionary(parse(parts(1)), parse(parts(2)), parts(3) == "true")
      case _ => throw bad("unknown type")
    }
  }
}
