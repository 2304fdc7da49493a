package io.sparklance.spark.write

import org.apache.spark.sql.catalyst.expressions.{SpecializedGetters, UnsafeRow}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.Platform

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.LogicalType.{Decimal => LanceDecimal, _}
import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.format.writer.{ByteBuf, IntBuf}

/**
 * Collects Spark rows into [[ColumnArray]] batches for the file writer: one builder per
 * field, each converting Spark's value to the field's Lance type (units, unsigned widening
 * undone, half floats, decimals to 16-byte little-endian) with the type dispatch done once
 * when the builder is made. A value that does not fit its Lance type (a negative value for
 * an unsigned column, a vector of the wrong length) fails naming the column.
 */
private[spark] abstract class ColBuilder(val field: LanceField) {
  // Validity is tracked only once a null comes: until then `count` is all there is to know.
  private var count = 0
  private var nulls: Array[Boolean] = null
  def size: Int = count
  def bytes: Long

  /** Appends `g[ord]` (which may be null). */
  final def add(g: SpecializedGetters, ord: Int): Unit =
    if (g.isNullAt(ord)) addNull()
    else { valid(); addValue(g, ord) }
  def addNull(): Unit = { markNull(); addPlaceholder() }

  /** Counts a null, whose slot the caller fills. */
  protected final def markNull(): Unit = {
    if (!field.nullable) throw LanceErrors.schemaMismatch(
      "",
      field.name,
      "is not nullable in the dataset but the DataFrame has a null in it"
    )
    if (nulls == null) nulls = new Array[Boolean](math.max(1024, count * 2))
    else if (count == nulls.length) nulls = java.util.Arrays.copyOf(nulls, count * 2)
    nulls(count) = true; count += 1
  }

  /** Counts a value, which the caller appends. */
  protected final def valid(): Unit = {
    if (nulls != null && count == nulls.length) nulls = java.util.Arrays.copyOf(nulls, count * 2)
    count += 1 // a slot of `nulls` past the last null is false already
  }
  protected def addValue(g: SpecializedGetters, ord: Int): Unit
  protected def addPlaceholder(): Unit

  /** Whether [[addStaged]] can take this column from staged `UnsafeRow`s. */
  private[write] def stageable: Boolean = false

  /** Appends field `ord` of every row in `rows`. */
  private[write] def addStaged(rows: StagedRows, ord: Int): Unit =
    throw new UnsupportedOperationException(s"column '${field.name}' is not taken from staged rows")

  /** A slot under a null parent: not null itself (its parent is), with no value. */
  final def placeholder(): Unit = { valid(); addPlaceholder() }

  /** The collected values; the builder is empty afterwards. */
  def build(): ColumnArray

  /**
   * The collected values as [[build]] gives them, but possibly over this builder's own
   * buffers (no copy): valid only until the next value is added. The builder is empty
   * afterwards.
   */
  def view(): ColumnArray = build()
  protected final def takeNulls(): Array[Boolean] = {
    val out = if (nulls == null) null else java.util.Arrays.copyOf(nulls, count)
    nulls = null; count = 0
    out
  }
}

private[spark] object ColBuilder {
  def apply(f: LanceField, dt: DataType): ColBuilder = (f.logicalType, dt) match {
    // A blob column (v1 binary or v2 struct) takes its bytes; the file writer stores the descriptors.
    case _ if io.sparklance.format.blob.BlobColumn.isBlob(f) && dt == BinaryType =>
      new VarBuilder(f, dt, LargeBinary)
    // Given as {data, uri[, position, size]}: the writer reads each value's fields; position
    // and size travel as signed longs whatever their Lance type.
    // The DataFrame's struct decides the children (an append may give four to a field of two).
    case (_, st: StructType) if io.sparklance.format.blob.BlobColumn.isBlob(f) =>
      new StructBuilder(
        f,
        st.fields.zipWithIndex.map { case (sf, i) =>
          val t = i match { case 0 => LargeBinary; case 1 => Utf8; case _ => Int64 }
          apply(
            LanceField(-1, f.id, sf.name, t, nullable = true, Predef.Map.empty, Nil),
            sf.dataType
          )
        }
      )
    case (Struct, st: StructType) =>
      new StructBuilder(
        f,
        f.children.zip(st.fields).map { case (c, sf) => apply(c, sf.dataType) }.toArray
      )
    case (List | LargeList | _: ListOfStruct, at: ArrayType) =>
      new ListBuilder(f, apply(f.children.head, at.elementType))
    case (Map, mt: MapType) =>
      val entries = f.children.head
      new MapBuilder(
        f,
        entries,
        apply(entries.children(0), mt.keyType),
        apply(entries.children(1), mt.valueType)
      )
    case (FixedSizeList(Float64, dim), udt) if MlVectorBuilder.isMlVector(udt) =>
      new MlVectorBuilder(f, dim)
    case (FixedSizeList(item, dim), at: ArrayType) =>
      val (w, conv) = fixed(f.copy(logicalType = item), item, at.elementType)
      new FslBuilder(f, dim, w, conv)
    case (Null, _) => new NullBuilder(f)
    case (t, _) =>
      // A dictionary column's values are written as its value type; the file writer keys them.
      val vt = t match { case d: Dictionary => d.value; case other => other }
      ValueShape.ofType(vt, f) match {
        case ValueShape.Var => new VarBuilder(f, dt, vt)
        case ValueShape.Fixed(_, _) =>
          val (w, conv) = fixed(f, vt, dt); new FixedBuilder(f, w, conv)
        case other =>
          throw LanceErrors.unsupportedType(f.name, t.text, s"cannot write values of shape $other")
      }
  }

  /**
   * Writes the Spark value at ordinal `o` of `g` into `a` at `p`. A trait rather than a
   * Scala function, whose Int arguments would be boxed on every call.
   */
  trait Conv {
    def apply(g: SpecializedGetters, o: Int, a: Array[Byte], p: Int): Unit
  }

  // The common conversions as classes of their own, which [[FixedBuilder]] calls directly.
  object LongConv extends Conv {
    def apply(g: SpecializedGetters, o: Int, a: Array[Byte], p: Int): Unit =
      LE.putI64(a, p, g.getLong(o))
  }
  object IntConv extends Conv {
    def apply(g: SpecializedGetters, o: Int, a: Array[Byte], p: Int): Unit =
      LE.putI32(a, p, g.getInt(o))
  }
  object DoubleConv extends Conv {
    def apply(g: SpecializedGetters, o: Int, a: Array[Byte], p: Int): Unit =
      LE.putI64(a, p, java.lang.Double.doubleToRawLongBits(g.getDouble(o)))
  }

  /**
   * A decimal of at most 18 digits into 16 bytes. An UnsafeRow holds it as its unscaled long:
   * read so, without a Decimal object per value.
   */
  final class UnscaledLongConv(precision: Int, scale: Int) extends Conv {
    def apply(g: SpecializedGetters, o: Int, a: Array[Byte], p: Int): Unit = {
      val v = g match {
        case u: UnsafeRow => u.getLong(o)
        case _ => g.getDecimal(o, precision, scale).toUnscaledLong
      }
      putUnscaled(a, p, v, 16)
    }
  }

  /** Unscaled `v` as a `width`-byte (16 or 32) little-endian two's complement decimal. */
  @inline def putUnscaled(a: Array[Byte], p: Int, v: Long, width: Int): Unit = {
    LE.putI64(a, p, v)
    val sign = v >> 63
    var k = 8
    while (k < width) { LE.putI64(a, p + k, sign); k += 8 }
  }

  private def bad(f: LanceField, why: String) = LanceErrors.schemaMismatch("", f.name, why)

  /** Byte width and converter writing one Spark value of `dt` as Lance type `t`. */
  def fixed(f: LanceField, t: LogicalType, dt: DataType): (Int, Conv) = t match {
    case Bool => (1, (g, o, a, p) => a(p) = if (g.getBoolean(o)) 1 else 0)
    case Int8 => (1, (g, o, a, p) => a(p) = g.getByte(o))
    case UInt8 => (
        1,
        (g, o, a, p) => {
          val v = g.getShort(o); if (v < 0 || v > 255) throw bad(f, s"holds $v, outside uint8");
          a(p) = v.toByte
        }
      )
    case Int16 => (2, (g, o, a, p) => LE.putI16(a, p, g.getShort(o)))
    case UInt16 => (
        2,
        (g, o, a, p) => {
          val v = g.getInt(o); if (v < 0 || v > 65535) throw bad(f, s"holds $v, outside uint16");
          LE.putI16(a, p, v.toShort)
        }
      )
    case Int32 | Date32 => (4, IntConv)
    case UInt32 => (
        4,
        (g, o, a, p) => {
          val v = g.getLong(o);
          if (v < 0 || v > 0xffffffffL) throw bad(f, s"holds $v, outside uint32");
          LE.putI32(a, p, v.toInt)
        }
      )
    case Int64 => (8, LongConv)
    case UInt64 => (
        8,
        (g, o, a, p) => {
          val d = g.getDecimal(o, 20, 0).toJavaBigDecimal.toBigIntegerExact
          if (d.signum < 0 || d.bitLength > 64) throw bad(f, s"holds $d, outside uint64")
          LE.putI64(a, p, d.longValue())
        }
      )
    case Float16 => (2, (g, o, a, p) => LE.putI16(a, p, Half.fromFloat(g.getFloat(o))))
    case BFloat16 => (
        2,
        (g, o, a, p) =>
          LE.putI16(a, p, (java.lang.Float.floatToRawIntBits(g.getFloat(o)) >>> 16).toShort)
      )
    case Float32 =>
      (4, (g, o, a, p) => LE.putI32(a, p, java.lang.Float.floatToRawIntBits(g.getFloat(o))))
    case Float64 => (8, DoubleConv)
    case Date64 => (8, (g, o, a, p) => LE.putI64(a, p, g.getInt(o).toLong * 86400000L))
    case Time(u) =>
      val w = Time(u).bitWidth / 8
      (
        w,
        (g, o, a, p) =>
          if (w == 4) LE.putI32(a, p, g.getLong(o).toInt) else LE.putI64(a, p, g.getLong(o))
      )
    case Timestamp(TimeUnit.Nano, _) | Duration(TimeUnit.Nano) => (8, LongConv)
    case Timestamp(u, _) => (8, fromMicros(f, u))
    case Duration(u) => (8, fromMicros(f, u))
    case LanceDecimal(bits, precision, scale) =>
      val w = bits / 8
      val asLong = dt match {
        case d: DecimalType => d.scale == scale && d.precision <= Decimal.MAX_LONG_DIGITS &&
          precision <= Decimal.MAX_LONG_DIGITS
        case _ => false
      }
      if (asLong && w == 16) (w, new UnscaledLongConv(precision, scale))
      else (
        w,
        (g, o, a, p) => {
          val d = g.getDecimal(o, precision, scale)
          if (d.precision <= 18) putUnscaled(a, p, d.toUnscaledLong, w)
          else {
            val be = d.toJavaBigDecimal.setScale(scale).unscaledValue().toByteArray
            val sign = (if (be(0) < 0) -1 else 0).toByte
            var k = 0
            while (k < w) { a(p + k) = if (k < be.length) be(be.length - 1 - k) else sign; k += 1 }
          }
        }
      )
    case FixedSizeBinary(n) => (
        n,
        (g, o, a, p) => {
          val b = g.getBinary(o)
          if (b.length != n) throw bad(
            f,
            s"holds a value of ${b.length} bytes but the dataset stores exactly $n (fixed_size_binary:$n)"
          )
          System.arraycopy(b, 0, a, p, n)
        }
      )
    case other => throw LanceErrors.unsupportedType(
        f.name,
        other.text,
        s"cannot be written from Spark ${dt.simpleString}"
      )
  }

  private def fromMicros(f: LanceField, u: TimeUnit): Conv = {
    val perMicro = 1000000L / u.perSecond
    if (u == TimeUnit.Micro) LongConv
    else (g, o, a, p) => {
      val v = g.getLong(o)
      if (v % perMicro != 0)
        throw bad(
          f,
          s"holds $v microseconds, which unit '${u.symbol}' of the dataset cannot store exactly"
        )
      LE.putI64(a, p, v / perMicro)
    }
  }
}

/** A Lance `null` column (Spark void): every row null, no values. */
private[write] final class NullBuilder(f: LanceField) extends ColBuilder(f) {
  def bytes: Long = 0L
  protected def addValue(g: SpecializedGetters, ord: Int): Unit =
    throw LanceErrors.unsupportedType(f.name, Null.text, "a null column holds only nulls")
  protected def addPlaceholder(): Unit = ()
  def build(): ColumnArray = { val n = size; takeNulls(); new NullArray(n) }
}

private[write] final class FixedBuilder(f: LanceField, width: Int, conv: ColBuilder.Conv)
    extends ColBuilder(f) {
  private val data = new ByteBuf(4096)
  def bytes: Long = data.size
  // The common conversions are called on their own classes, which the JIT inlines; the call
  // through `conv` cannot be, as the builders of every column share it.
  private val kind = conv match {
    case ColBuilder.LongConv => 1
    case ColBuilder.IntConv => 2
    case ColBuilder.DoubleConv => 3
    case _: ColBuilder.UnscaledLongConv => 4
    case _ => 0
  }
  private val decimal = conv match {
    case d: ColBuilder.UnscaledLongConv => d
    case _ => null
  }
  // Every converter writes all `width` bytes of its slot, so the slot is not zeroed first.
  protected def addValue(g: SpecializedGetters, ord: Int): Unit = {
    val at = data.extend(width)
    (kind: @scala.annotation.switch) match {
      case 1 => ColBuilder.LongConv(g, ord, data.array, at)
      case 2 => ColBuilder.IntConv(g, ord, data.array, at)
      case 3 => ColBuilder.DoubleConv(g, ord, data.array, at)
      case 4 => decimal(g, ord, data.array, at)
      case _ => conv(g, ord, data.array, at)
    }
  }
  protected def addPlaceholder(): Unit = data.zeros(width)
  override private[write] def stageable: Boolean = kind != 0
  override private[write] def addStaged(rows: StagedRows, ord: Int): Unit = {
    val n = rows.rows
    var at = data.extend(n * width)
    val a = data.array
    var r = 0
    while (r < n) {
      if (rows.isNull(r, ord)) { markNull(); java.util.Arrays.fill(a, at, at + width, 0.toByte) }
      else {
        valid()
        val v = rows.slot(r, ord)
        (kind: @scala.annotation.switch) match {
          case 2 => LE.putI32(a, at, v.toInt)
          case 4 => ColBuilder.putUnscaled(a, at, v, 16)
          case _ => LE.putI64(a, at, v) // a long, or a double's bits
        }
      }
      at += width; r += 1
    }
  }
  def build(): ColumnArray = result(data.toArray)
  override def view(): ColumnArray = result(data.array)
  private def result(values: Array[Byte]): ColumnArray = {
    val out = new FixedWidthArray(size, takeNulls(), width, values)
    data.clear(); out
  }
}

private[write] final class VarBuilder(f: LanceField, dt: DataType, t: LogicalType)
    extends ColBuilder(f) {
  private val data = new ByteBuf(4096)
  private val offsets = new IntBuf(1024)
  offsets.add(0)
  private val isString = dt.isInstanceOf[StringType]
  def bytes: Long = data.size + 4L * offsets.size
  protected def addValue(g: SpecializedGetters, ord: Int): Unit = {
    if (isString) {
      // Copied straight into the buffer: no intermediate array per value. A string in a byte
      // array (an UnsafeRow's, a column vector's) by System.arraycopy, which copies the few
      // bytes of a short string faster than Unsafe.copyMemory does.
      val s = g.getUTF8String(ord)
      val n = s.numBytes
      val at = data.extend(n)
      s.getBaseObject match {
        case b: Array[Byte] =>
          val from = (s.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt
          System.arraycopy(b, from, data.array, at, n)
        case _ => s.writeToMemory(data.array, Platform.BYTE_ARRAY_OFFSET + at)
      }
    } else data.bytes(g.getBinary(ord))
    if (data.size < 0) throw LanceErrors.unsupported(s"Column '${f.name}': a batch exceeds 2 GiB")
    offsets.add(data.size)
  }
  protected def addPlaceholder(): Unit = offsets.add(data.size)
  override private[write] def stageable: Boolean = isString || dt == BinaryType
  override private[write] def addStaged(rows: StagedRows, ord: Int): Unit = {
    val n = rows.rows
    val src = rows.array
    var r = 0
    while (r < n) {
      if (rows.isNull(r, ord)) markNull()
      else {
        valid()
        val offsetAndSize = rows.slot(r, ord)
        data.bytes(src, rows.start(r) + (offsetAndSize >>> 32).toInt, offsetAndSize.toInt)
      }
      offsets.add(data.size)
      r += 1
    }
  }
  def build(): ColumnArray =
    result(java.util.Arrays.copyOf(offsets.array, size + 1), data.toArray)
  override def view(): ColumnArray = result(offsets.array, data.array)
  private def result(offs: Array[Int], values: Array[Byte]): ColumnArray = {
    val out = new VarBinaryArray(size, takeNulls(), offs, values)
    data.clear(); offsets.clear(); offsets.add(0); out
  }
}

private[write] final class FslBuilder(f: LanceField, dim: Int, width: Int, conv: ColBuilder.Conv)
    extends ColBuilder(f) {
  private val data = new ByteBuf(4096)
  private val itemNulls = new ByteBuf(1024)
  private var anyItemNull = false
  def bytes: Long = data.size
  protected def addValue(g: SpecializedGetters, ord: Int): Unit = {
    val arr = g.getArray(ord)
    if (arr.numElements() != dim)
      throw LanceErrors.schemaMismatch(
        "",
        f.name,
        s"holds an array of ${arr.numElements()} items but the dataset stores exactly $dim (${f.logicalType.text})"
      )
    var i = 0
    while (i < dim) {
      data.zeros(width)
      if (arr.isNullAt(i)) { itemNulls.u8(1); anyItemNull = true }
      else { itemNulls.u8(0); conv(arr, i, data.array, data.size - width) }
      i += 1
    }
  }
  protected def addPlaceholder(): Unit = {
    data.zeros(width * dim); var i = 0; while (i < dim) { itemNulls.u8(0); i += 1 }
  }
  def build(): ColumnArray = {
    val n = size
    val itemN = if (!anyItemNull) null else Array.tabulate(n * dim)(i => itemNulls.array(i) != 0)
    val out = new FixedSizeListArray(
      n,
      takeNulls(),
      dim,
      new FixedWidthArray(n * dim, itemN, width, data.toArray)
    )
    data.clear(); itemNulls.clear(); anyItemNull = false; out
  }
}

private[write] final class StructBuilder(f: LanceField, kids: Array[ColBuilder])
    extends ColBuilder(f) {
  def bytes: Long = kids.map(_.bytes).sum
  protected def addValue(g: SpecializedGetters, ord: Int): Unit = {
    val r = g.getStruct(ord, kids.length)
    var i = 0
    while (i < kids.length) { kids(i).add(r, i); i += 1 }
  }
  protected def addPlaceholder(): Unit = kids.foreach(_.placeholder())
  def build(): ColumnArray = { val n = size; new StructArray(n, takeNulls(), kids.map(_.build())) }
}

private[write] final class ListBuilder(f: LanceField, item: ColBuilder) extends ColBuilder(f) {
  private val offsets = new IntBuf(1024)
  offsets.add(0)
  def bytes: Long = item.bytes + 4L * offsets.size
  protected def addValue(g: SpecializedGetters, ord: Int): Unit = {
    val arr = g.getArray(ord)
    var i = 0
    val n = arr.numElements()
    while (i < n) { item.add(arr, i); i += 1 }
    offsets.add(item.size)
  }
  protected def addPlaceholder(): Unit = offsets.add(item.size)
  def build(): ColumnArray = {
    val n = size
    val out =
      new ListArray(n, takeNulls(), java.util.Arrays.copyOf(offsets.array, n + 1), item.build())
    offsets.clear(); offsets.add(0); out
  }
}

private[write] final class MapBuilder(
    f: LanceField,
    entries: LanceField,
    keys: ColBuilder,
    values: ColBuilder
) extends ColBuilder(f) {
  private val offsets = new IntBuf(1024)
  offsets.add(0)
  def bytes: Long = keys.bytes + values.bytes + 4L * offsets.size
  protected def addValue(g: SpecializedGetters, ord: Int): Unit = {
    val m = g.getMap(ord)
    val k = m.keyArray(); val v = m.valueArray()
    var i = 0
    while (i < m.numElements()) { keys.add(k, i); values.add(v, i); i += 1 }
    offsets.add(keys.size)
  }
  protected def addPlaceholder(): Unit = offsets.add(keys.size)
  def build(): ColumnArray = {
    val n = size
    val kv = new StructArray(keys.size, null, Array(keys.build(), values.build()))
    val out = new ListArray(n, takeNulls(), java.util.Arrays.copyOf(offsets.array, n + 1), kv)
    offsets.clear(); offsets.add(0); out
  }
}

/** Float to IEEE half precision, rounding to nearest even (Java 17 has no Float.floatToFloat16). */
private[write] object Half {
  def fromFloat(x: Float): Short = {
    val bits = java.lang.Float.floatToRawIntBits(x)
    val sign = (bits >>> 16) & 0x8000
    val exp = (bits >>> 23) & 0xff
    val mant = bits & 0x7fffff
    if (exp == 0xff) return (sign | 0x7c00 | (if (mant != 0) 0x200 | (mant >>> 13) else 0)).toShort
    val e = exp - 127 + 15
    if (e >= 0x1f) return (sign | 0x7c00).toShort
    if (e <= 0) {
      if (e < -10) return sign.toShort
      val m = mant | 0x800000
      val shift = 14 - e
      var h = m >>> shift
      val rem = m & ((1 << shift) - 1); val half = 1 << (shift - 1)
      if (rem > half || (rem == half && (h & 1) == 1)) h += 1
      return (sign | h).toShort
    }
    var h = (e << 10) | (mant >>> 13)
    val rem = mant & 0x1fff
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1) == 1)) h += 1
    (sign | h).toShort
  }
}
