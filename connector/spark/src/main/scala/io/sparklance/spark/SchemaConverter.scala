package io.sparklance.spark

import org.apache.spark.sql.types._

import io.sparklance.LanceErrors
import io.sparklance.format.{LanceField, LanceSchema, LogicalType}
import io.sparklance.format.blob.BlobColumn
import io.sparklance.format.LogicalType.{Decimal => LanceDecimal, _}

/**
 * Lance types to Spark types. The mapping is lossless: every Lance value has exactly one
 * Spark value. Where Spark has no exact type (unsigned integers, nanosecond timestamps,
 * half floats) we widen to a Spark type that holds every value exactly, or expose the raw
 * integer; never a type that would round. The table is in the README ("Type mapping").
 *
 * Each Spark field carries the Lance logical type in its metadata under [[LogicalTypeKey]],
 * so a read-then-write round trip can restore the Lance type.
 */
object SchemaConverter {
  val LogicalTypeKey = "lance:logical_type"
  val FieldIdKey = "lance:field_id"

  def toSpark(schema: LanceSchema): StructType = StructType(schema.fields.map(toSparkField))

  /** Prefix of the Lance field metadata that says how a column is encoded; exposed to Spark as is. */
  val EncodingKeyPrefix = "lance-encoding:"

  /**
   * The Spark field of `f`. Its metadata carries the Lance type ([[LogicalTypeKey]]) and the
   * field's `lance-encoding:*` keys, so writing the DataFrame back keeps encodings; a blob
   * column (v1 or v2) says `lance-encoding:blob` = "true", so it is written back as a blob.
   */
  def toSparkField(f: LanceField): StructField = {
    val b = new MetadataBuilder().putString(LogicalTypeKey, f.logicalType.text)
    f.metadata.keys.toSeq.sorted.filter(_.startsWith(EncodingKeyPrefix)).foreach { k =>
      b.putString(k, f.metadataString(k).getOrElse(""))
    }
    if (BlobColumn.isBlob(f)) b.putString(BlobColumn.BlobMetaKey, "true")
    // A list of blobs reads as an array of their bytes, marked (with the items' blob keys) so
    // that writing it back makes blob items again.
    blobItem(f).foreach { item =>
      item.metadata.keys.toSeq.sorted.filter(_.startsWith(EncodingKeyPrefix)).foreach { k =>
        b.putString(k, item.metadataString(k).getOrElse(""))
      }
      b.putString(BlobColumn.BlobMetaKey, "true")
    }
    // The column comment (ALTER COLUMN ... COMMENT, CREATE TABLE's column comments).
    f.metadataString("comment").foreach(b.putString("comment", _))
    StructField(f.name, toSparkType(f), f.nullable, b.build())
  }

  /** The item of list `f` when it is a blob column. */
  private def blobItem(f: LanceField): Option[LanceField] =
    if (f.logicalType.isVariableList) f.children.headOption.filter(BlobColumn.isBlob) else None

  def toSparkType(f: LanceField): DataType = f.logicalType match {
    // A blob column (v1 binary or v2 struct) reads as its bytes, not as its descriptors.
    case _ if BlobColumn.isBlob(f) => BinaryType
    case Struct => StructType(f.children.map(toSparkField))
    case List | LargeList | ListOfStruct(_) =>
      val item = singleChild(f)
      ArrayType(toSparkType(item), item.nullable)
    case Map =>
      val entries = singleChild(f)
      if (entries.children.size != 2)
        throw LanceErrors.unsupportedType(
          f.name,
          f.logicalType.text,
          "a map's entries must have a key and a value"
        )
      val Seq(key, value) = entries.children
      MapType(toSparkType(key), toSparkType(value), value.nullable)
    // A fixed-size list of structs (2.2) has an item field; one of primitives has none, its
    // item being implicit and always nullable.
    case FixedSizeList(_, _) if f.children.nonEmpty =>
      val item = singleChild(f)
      ArrayType(toSparkType(item), item.nullable)
    case FixedSizeList(item, _) => ArrayType(leafType(f.name, item), containsNull = true)
    case other => leafType(f.name, other)
  }

  private def singleChild(f: LanceField): LanceField = f.children match {
    case Seq(c) => c
    case cs => throw LanceErrors.unsupportedType(
        f.name,
        f.logicalType.text,
        s"expected one child field, found ${cs.size}"
      )
  }

  /** Spark type of a leaf (non-nested) Lance type. */
  def leafType(column: String, t: LogicalType): DataType = t match {
    case Null => NullType
    case Bool => BooleanType
    case Int8 => ByteType
    case Int16 => ShortType
    case Int32 => IntegerType
    case Int64 => LongType
    case UInt8 => ShortType
    case UInt16 => IntegerType
    case UInt32 => LongType
    case UInt64 => DecimalType(20, 0)
    case Float16 | BFloat16 | Float32 => FloatType
    case Float64 => DoubleType
    case Utf8 | LargeUtf8 => StringType
    case Binary | LargeBinary | Json | FixedSizeBinary(_) => BinaryType
    case Date32 | Date64 => DateType
    case Timestamp(TimeUnit.Nano, _) => LongType
    case Timestamp(_, Some(_)) => TimestampType
    case Timestamp(_, None) => TimestampNTZType
    case Time(_) => LongType
    case Duration(TimeUnit.Nano) => LongType
    case Duration(_) => DayTimeIntervalType()
    case LanceDecimal(_, p, s) if p <= DecimalType.MAX_PRECISION => DecimalType(p, s)
    case LanceDecimal(_, p, _) =>
      throw LanceErrors.unsupportedType(
        column,
        t.text,
        s"precision $p exceeds Spark's maximum of ${DecimalType.MAX_PRECISION}"
      )
    case Dictionary(value, _, _) => leafType(column, value)
    case FixedSizeList(item, _) => ArrayType(leafType(column, item), containsNull = true)
    case Struct | List | LargeList | Map | ListOfStruct(_) =>
      throw LanceErrors.unsupportedType(column, t.text, "nested type without child fields")
  }

  /**
   * Prunes `field` to what `requested` (a pruned form of this field's Spark type) still
   * contains: Spark delivers nested column pruning as a narrower struct.
   */
  def prune(field: LanceField, requested: DataType): LanceField =
    (field.logicalType, requested) match {
      case _ if BlobColumn.isBlob(field) => field
      case (Struct, st: StructType) =>
        val kept = st.fields.toSeq.map { sf =>
          val child = field.children.find(_.name == sf.name).getOrElse(
            throw new IllegalStateException(
              s"Spark asked for '${field.name}.${sf.name}', which the Lance schema lacks"
            )
          )
          prune(child, sf.dataType)
        }
        field.copy(children = kept)
      case (List | LargeList | ListOfStruct(_), at: ArrayType) =>
        field.copy(children = Seq(prune(singleChild(field), at.elementType)))
      case (FixedSizeList(_, _), at: ArrayType) if field.children.nonEmpty =>
        field.copy(children = Seq(prune(singleChild(field), at.elementType)))
      case (Map, mt: MapType) =>
        val entries = singleChild(field)
        val Seq(k, v) = entries.children
        field.copy(children =
          Seq(entries.copy(children = Seq(prune(k, mt.keyType), prune(v, mt.valueType))))
        )
      case _ => field
    }
}
