package io.sparklance.spark.write

import java.util.Locale

import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types._

import io.sparklance.{LanceErrors, LanceException}
import io.sparklance.format.{LanceField, LanceSchema, LogicalType}
import io.sparklance.format.blob.{BlobColumn, BlobThresholds}
import io.sparklance.format.writer.FileVersion
import io.sparklance.format.LogicalType._
import io.sparklance.spark.SchemaConverter

/**
 * Spark schemas to Lance fields, for new datasets and overwrites. Ids are assigned
 * depth-first, pre-order, as Lance does. A field carrying `lance:logical_type` metadata (what
 * our reader puts on every column) keeps that Lance type when it fits the Spark type, so a
 * read-then-write round trip keeps unsigned integers, half floats, nanosecond timestamps,
 * large types and fixed-size-list vectors. The `lance-encoding:*` keys the writer honours
 * (compression, structural encoding, dictionary limits; see `EncodingParams`) are copied
 * from the Spark field metadata into the Lance field, as pylance takes them from Arrow
 * field metadata.
 */
object SparkToLance {

  /**
   * Lance fields for `schema`, written as data storage `version`. A binary field whose metadata
   * has `lance-encoding:blob` (not "false") is a blob column, as pylance 14.0.2 stores it: in
   * 2.0/2.1 `large_binary` with that key (blob v1); in 2.2 promoted to blob v2, a struct with
   * extension `lance.blob.v2` and children `data` (large_binary) and `uri` (string), the key
   * dropped and the other `lance-encoding:*` keys (blob thresholds among them) kept. The key on
   * an array of binary makes its items blobs (blob v2 in lists needs 2.2).
   */
  def fields(schema: StructType, version: FileVersion = FileVersion.Default): Seq[LanceField] = {
    var next = 0
    def alloc(): Int = { val id = next; next += 1; id }
    def field(
        name: String,
        dt: DataType,
        nullable: Boolean,
        md: Metadata,
        parent: Int
    ): LanceField = {
      checkName(name)
      val id = alloc()
      // `lance-encoding:blob` on an array of binary makes its items blobs (2.2).
      val blobItems = dt match {
        case at: ArrayType => at.elementType == BinaryType && isBlobRequest(md, name)
        case _ => false
      }
      if (!blobItems && isBlobRequest(md, name)) {
        val md0 = encodingMetadata(md, name)
        dt match {
          case st: StructType =>
            return blobStruct(id, parent, name, st, nullable, md0, version, alloc _)
          case BinaryType =>
          case _ => throw LanceErrors.unsupportedType(
              name,
              dt.simpleString,
              s"field metadata " +
                s"${BlobColumn.BlobMetaKey} needs a binary column (or a struct of data, uri, " +
                "position, size)"
            )
        }
        return if (version.minor < 2)
          LanceField(
            id,
            parent,
            name,
            LargeBinary,
            nullable,
            md0 + (BlobColumn.BlobMetaKey -> utf8("true")),
            Nil
          )
        else {
          val data =
            LanceField(alloc(), id, "data", LargeBinary, nullable = true, Predef.Map.empty, Nil)
          val uri = LanceField(alloc(), id, "uri", Utf8, nullable = true, Predef.Map.empty, Nil)
          LanceField(
            id,
            parent,
            name,
            Struct,
            nullable,
            md0 + (BlobColumn.ExtensionNameKey -> utf8(BlobColumn.V2ExtensionName)),
            Seq(data, uri)
          )
        }
      }
      val hinted = if (md != null && md.contains(SchemaConverter.LogicalTypeKey)) {
        try Some(LogicalType.parse(md.getString(SchemaConverter.LogicalTypeKey)))
        catch { case _: LanceException => None }
      } else None
      dt match {
        case st: StructType =>
          LanceField(
            id,
            parent,
            name,
            Struct,
            nullable,
            encodingMetadata(md, name),
            st.fields.toSeq.map(f => field(f.name, f.dataType, f.nullable, f.metadata, id))
          )
        case at: ArrayType =>
          hinted.collect { case t: FixedSizeList if fits(t, dt, name) => t }
            .orElse(vectorHint(md, name, at)) match {
            case Some(t) =>
              LanceField(id, parent, name, t, nullable, encodingMetadata(md, name), Nil)
            case None =>
              val large = hinted.exists(h => h == LargeList || h == ListOfStruct(true))
              val t = at.elementType match {
                case _: StructType => ListOfStruct(large)
                case _ => if (large) LargeList else List
              }
              // Blob items take the array's blob keys (thresholds too); the list keeps none.
              val (listMd, itemMd) =
                if (blobItems) (Predef.Map.empty[String, Array[Byte]], md)
                else (encodingMetadata(md, name), null)
              LanceField(
                id,
                parent,
                name,
                t,
                nullable,
                listMd,
                Seq(field("item", at.elementType, at.containsNull, itemMd, id))
              )
          }
        case udt if MlVectorBuilder.isMlVector(udt) =>
          val dim = vectorDim(md, name).getOrElse(throw LanceErrors.unsupportedType(
            name,
            "vector",
            s"a pyspark.ml vector column is written as fixed_size_list<double>[dim]: " +
              s"give its dimension with the write option vector_columns=$name:<dim> or the " +
              s"field metadata $FixedSizeListKey, or convert it with " +
              s"spark_lance.as_vector(df, '$name', dim)"
          ))
          LanceField(
            id,
            parent,
            name,
            FixedSizeList(default(s"$name.item", DoubleType), dim),
            nullable,
            encodingMetadata(md, name),
            Nil
          )
        case mt: MapType =>
          val eid = alloc()
          val entries = LanceField(
            eid,
            id,
            "entries",
            Struct,
            nullable = false,
            Predef.Map.empty,
            Seq(
              field("key", mt.keyType, nullable = false, null, eid),
              field("value", mt.valueType, mt.valueContainsNull, null, eid)
            )
          )
          LanceField(
            id,
            parent,
            name,
            LogicalType.Map,
            nullable,
            encodingMetadata(md, name),
            Seq(entries)
          )
        case _ =>
          val t = hinted.filter(h => fits(h, dt, name)).getOrElse(default(name, dt))
          LanceField(id, parent, name, t, nullable, encodingMetadata(md, name), Nil)
      }
    }
    checkDistinct(schema, "")
    schema.fields.toSeq.map(f => field(f.name, f.dataType, f.nullable, f.metadata, -1))
  }

  /** Spark types of a blob given as pylance's BlobType storage: data, uri, position, size. */
  private val BlobStructFields: Seq[(String, Seq[DataType], LogicalType)] = Seq(
    ("data", Seq(BinaryType), LargeBinary),
    ("uri", Seq(StringType), Utf8),
    ("position", Seq(LongType), UInt64),
    ("size", Seq(LongType), UInt64)
  )

  /**
   * A blob column given as `struct<data: binary, uri: string[, position: long, size: long]>`
   * (2.2), as pylance's BlobType takes values: each value is bytes or an external URI (a
   * range of it with position and size). Its Lance field is BlobType's (children named as the
   * struct's, position and size uint64).
   */
  private def blobStruct(
      id: Int,
      parent: Int,
      name: String,
      st: StructType,
      nullable: Boolean,
      md0: scala.collection.immutable.Map[String, Array[Byte]],
      version: FileVersion,
      alloc: () => Int
  ): LanceField = {
    val want = if (st.length == 2) BlobStructFields.take(2) else BlobStructFields
    val fits = (st.length == 2 || st.length == 4) && st.fields.zip(want).forall {
      case (f, (n, types, _)) => f.name == n && types.contains(f.dataType)
    }
    if (!fits)
      throw LanceErrors.unsupportedType(
        name,
        st.simpleString,
        "a blob column given as a " +
          "struct must be struct<data: binary, uri: string> or struct<data: binary, uri: string, " +
          "position: bigint, size: bigint>, as pylance's BlobType"
      )
    if (version.minor < 2)
      throw LanceErrors.unsupportedType(
        name,
        "blob",
        "blob values given as data or uri are " +
          s"blob v2, which needs data_storage_version 2.2 (this write uses ${version.name})"
      )
    val kids = want.map { case (n, _, t) =>
      LanceField(alloc(), id, n, t, nullable = true, Predef.Map.empty, Nil)
    }
    LanceField(
      id,
      parent,
      name,
      Struct,
      nullable,
      md0 + (BlobColumn.ExtensionNameKey -> utf8(BlobColumn.V2ExtensionName)),
      kids
    )
  }

  /**
   * Refuses names of one struct (`where`: its path, "" at the top) that differ only in case
   * when Spark resolves names ignoring case (`spark.sql.caseSensitive=false`, the default):
   * reading them back, `select("a")` could not tell `a` from `A`.
   */
  private def checkDistinct(st: StructType, where: String): Unit = {
    if (!SQLConf.get.caseSensitiveAnalysis)
      st.fieldNames.groupBy(_.toLowerCase(Locale.ROOT)).values.find(_.length > 1)
        .foreach { same =>
          throw LanceErrors.unsupported(s"Cannot write columns ${same.map(n => s"'$where$n'")
              .mkString(" and ")}: their names differ only in case, which Spark cannot tell " +
            "apart when it reads them (spark.sql.caseSensitive=false); rename one, or set " +
            "spark.sql.caseSensitive=true")
        }
    st.fields.foreach { f =>
      def inner(dt: DataType): Unit = dt match {
        case s: StructType => checkDistinct(s, s"$where${f.name}.")
        case a: ArrayType => inner(a.elementType)
        case m: MapType => inner(m.keyType); inner(m.valueType)
        case _ =>
      }
      inner(f.dataType)
    }
  }

  /** Field metadata keys that steer how a column is encoded, copied to the Lance field. */
  val EncodingKeys: Seq[String] = Seq(
    "lance-encoding:compression",
    "lance-encoding:compression-level",
    "lance-encoding:structural-encoding",
    "lance-encoding:dict-divisor",
    "lance-encoding:dict-size-ratio",
    "lance-encoding:dict-values-compression",
    "lance-encoding:dict-values-compression-level",
    "lance-encoding:rle-threshold",
    "lance-encoding:bss",
    "lance-encoding:packed"
  ) ++
    BlobThresholds.Keys

  private def utf8(s: String): Array[Byte] = s.getBytes(java.nio.charset.StandardCharsets.UTF_8)

  /** Whether Spark field metadata asks for a blob column: `lance-encoding:blob` present and not false. */
  def isBlobRequest(md: Metadata, column: String): Boolean =
    md != null && md.contains(BlobColumn.BlobMetaKey) && {
      val v = scala.util.Try(md.getString(BlobColumn.BlobMetaKey))
        .orElse(scala.util.Try(md.getBoolean(BlobColumn.BlobMetaKey).toString))
        .getOrElse(throw LanceErrors.unsupported(
          s"""Column '$column': field metadata ${BlobColumn.BlobMetaKey} must be "true" or "false""""
        ))
      !v.trim.equalsIgnoreCase("false")
    }

  /** lance-spark's field-metadata key for vector columns: the fixed number of items. */
  val FixedSizeListKey = "arrow.fixed-size-list.size"

  /** The number of items [[FixedSizeListKey]] in `md` asks for, if it is there. */
  private def vectorDim(md: Metadata, name: String): Option[Int] = {
    if (md == null || !md.contains(FixedSizeListKey)) return None
    val raw = scala.util.Try(md.getLong(FixedSizeListKey).toString)
      .orElse(scala.util.Try(md.getString(FixedSizeListKey))).getOrElse("?")
    Some(scala.util.Try(raw.trim.toInt).toOption.filter(_ > 0).getOrElse(
      throw LanceErrors.unsupported(s"Column '$name': field metadata $FixedSizeListKey must be " +
        s"a positive whole number of items, not '$raw'")
    ))
  }

  /**
   * The vector type `md` asks for with [[FixedSizeListKey]]: `fixed_size_list<item>[n]` of
   * the array's numeric item type (what LanceDB and pylance index and search).
   */
  private def vectorHint(md: Metadata, name: String, at: ArrayType): Option[LogicalType] = {
    val dim = vectorDim(md, name).getOrElse(return None)
    at.elementType match {
      case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType =>
        Some(FixedSizeList(default(s"$name.item", at.elementType), dim))
      case other =>
        throw LanceErrors.unsupportedType(
          name,
          s"array<${other.simpleString}>",
          s"field metadata $FixedSizeListKey makes a vector of numbers; the items are " +
            other.simpleString
        )
    }
  }

  /**
   * The [[EncodingKeys]] and the column's comment (Spark's `comment` key, kept by Lance as
   * field metadata `comment`) present in `md`, as UTF-8 strings (numbers written as Spark
   * prints them).
   */
  def encodingMetadata(md: Metadata, column: String): Predef.Map[String, Array[Byte]] =
    if (md == null) Predef.Map.empty
    else (EncodingKeys :+ "comment").filter(md.contains).map { k =>
      val v = scala.util.Try(md.getString(k))
        .orElse(scala.util.Try(md.getLong(k).toString))
        .orElse(scala.util.Try(md.getDouble(k).toString))
        .orElse(scala.util.Try(md.getBoolean(k).toString))
        .getOrElse(throw LanceErrors.unsupported(
          s"Column '$column': field metadata $k must be a string or a number"
        ))
      k -> v.getBytes(java.nio.charset.StandardCharsets.UTF_8)
    }.toMap

  /** Whether values of Lance type `t` read back as Spark type `dt` (so writing `dt` as `t` is lossless). */
  private def fits(t: LogicalType, dt: DataType, column: String): Boolean = t match {
    case _: Dictionary | Json | Null => false
    case FixedSizeList(item, _) => item match {
        case _: FixedSizeList => false
        case i => dt match {
            case ArrayType(e, _) =>
              try SchemaConverter.leafType(column, i) == e
              catch { case _: LanceException => false }
            case _ => false
          }
      }
    case Struct | List | LargeList | LogicalType.Map | _: ListOfStruct => false
    case other =>
      try SchemaConverter.leafType(column, other) == dt
      catch { case _: LanceException => false }
  }

  /** The Lance type Spark's own Arrow conversion would pick. */
  def default(column: String, dt: DataType): LogicalType = dt match {
    case BooleanType => Bool
    case ByteType => Int8
    case ShortType => Int16
    case IntegerType => Int32
    case LongType => Int64
    case FloatType => Float32
    case DoubleType => Float64
    case _: StringType | _: CharType | _: VarcharType => Utf8
    case BinaryType => Binary
    case DateType => Date32
    case TimestampType => Timestamp(TimeUnit.Micro, Some("UTC"))
    case TimestampNTZType => Timestamp(TimeUnit.Micro, None)
    case d: DecimalType => LogicalType.Decimal(128, d.precision, d.scale)
    case _: DayTimeIntervalType => Duration(TimeUnit.Micro)
    case other => throw LanceErrors.unsupportedType(
        column,
        other.simpleString,
        "Lance has no type for this Spark type"
      )
  }

  /**
   * Checks that a DataFrame of `schema` can be appended to a dataset of `target` and returns,
   * for each dataset field, the DataFrame column feeding it. Columns are matched by name
   * (exactly, else ignoring case); every dataset column must be present, no other column may
   * be, and each column's type must be the one the dataset's type reads as in Spark.
   */
  /** Names pylance cannot address: empty, or with a '.' (pylance reads "a.b" as a path). */
  def checkName(name: String): Unit =
    if (name.isEmpty || name.contains('.'))
      throw LanceErrors.unsupported(s"Cannot write column '$name': pylance cannot read a " +
        (if (name.isEmpty) "column with an empty name" else "column whose name contains '.'") +
        "; rename it (e.g. withColumnRenamed)")

  def matchForAppend(
      path: String,
      target: LanceSchema,
      schema: StructType
  ): Seq[(LanceField, Int)] = {
    val used = scala.collection.mutable.Set[Int]()
    val out = target.fields.map { f =>
      val idx = {
        val exact = schema.fields.indexWhere(_.name == f.name)
        if (exact >= 0) exact else schema.fields.indexWhere(_.name.equalsIgnoreCase(f.name))
      }
      if (idx < 0) throw LanceErrors.schemaMismatch(
        path,
        f.name,
        "of the dataset is missing from the DataFrame; " +
          s"the DataFrame has ${schema.fieldNames.mkString(", ")}"
      )
      used += idx
      checkType(path, f.name, f, schema.fields(idx).dataType)
      (f, idx)
    }
    schema.fields.indices.filterNot(used).headOption.foreach { i =>
      throw notInDataset(path, schema.fields(i).name, target.fields.map(_.name))
    }
    out
  }

  /** A DataFrame column the dataset at `path` (of `columns`) lacks, for an append. */
  def notInDataset(path: String, column: String, columns: Seq[String]): LanceException =
    LanceErrors.schemaMismatch(
      path,
      column,
      s"is not in the dataset, whose columns are " +
        s"${columns.mkString(", ")}; to add it, append with option mergeSchema=true"
    )

  private def checkType(path: String, name: String, f: LanceField, dt: DataType): Unit = {
    // Blob columns read (and are appended) as their bytes; the writer stores descriptors. Where
    // blobs may sit (lists from 2.2 on, not maps) is the write plan's check. Blob v2 values may
    // also come as {data, uri[, position, size]}.
    if (BlobColumn.version(f).contains(BlobColumn.V2)) dt match {
      case st: StructType =>
        blobStruct(
          f.id,
          f.parentId,
          name,
          st,
          f.nullable,
          Predef.Map.empty,
          FileVersion.V2_2,
          () => -1
        ); return
      case _ =>
    }
    val expected =
      try SchemaConverter.toSparkType(f)
      catch {
        case e: LanceException => throw LanceErrors.schemaMismatch(
            path,
            name,
            s"has Lance type ${f.logicalType.text}, which cannot be written: ${e.getMessage}"
          )
      }
    if (!sameIgnoringNullability(expected, dt))
      throw LanceErrors.schemaMismatch(
        path,
        name,
        s"has type ${dt.simpleString} in the DataFrame but ${expected.simpleString} (Lance ${f.logicalType.text}) in the dataset"
      )
  }

  private def sameIgnoringNullability(a: DataType, b: DataType): Boolean = (a, b) match {
    case (x: StructType, y: StructType) =>
      x.length == y.length && x.fields.zip(y.fields).forall { case (p, q) =>
        p.name == q.name && sameIgnoringNullability(p.dataType, q.dataType)
      }
    case (ArrayType(x, _), ArrayType(y, _)) => sameIgnoringNullability(x, y)
    case (MapType(k1, v1, _), MapType(k2, v2, _)) =>
      sameIgnoringNullability(k1, k2) && sameIgnoringNullability(v1, v2)
    case (_: StringType, _: StringType) => true
    case (x, y) => x == y
  }
}
