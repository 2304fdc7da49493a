package io.sparklance.spark

import java.lang.invoke.{MethodHandles, VarHandle}
import java.nio.ByteOrder

import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.LogicalType.{Decimal => LanceDecimal, _}

/**
 * Moves decoded arrays into Spark column vectors. Fixed-width values that Spark stores
 * as-is go over in one bulk little-endian copy; values needing a conversion (units,
 * unsigned widening, half floats) take one tight loop per column. The type dispatch happens
 * once per column per batch, never per value.
 *
 * Every array is written starting at row 0 of its vector: a batch writes each top-level
 * column once, and a list's child array is written whole into the child vector, so list
 * offsets can be used unchanged.
 */
object ColumnVectorWriter {
  private val LE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN
  private val I16: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Short]], ByteOrder.LITTLE_ENDIAN)
  private val I32: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Int]], ByteOrder.LITTLE_ENDIAN)
  private val I64: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Long]], ByteOrder.LITTLE_ENDIAN)

  def write(v: WritableColumnVector, field: LanceField, a: ColumnArray): Unit = {
    val n = a.length
    // A dictionary left by the vector's previous batch would shadow the values written now.
    DictionaryVectors.clear(v)
    a match {
      case _: NullArray => v.putNulls(0, n); return
      case _ =>
    }
    // A Lance `null` column (Spark void) decodes to placeholder values: every row is null.
    if (field.logicalType == Null) { v.putNulls(0, n); return }
    (v.dataType(), a) match {
      case (st: StructType, s: StructArray) =>
        var j = 0
        while (j < st.fields.length) {
          val child = v.getChild(j)
          child.reserve(n)
          write(child, field.children(j), s.children(j))
          j += 1
        }
      case (_: ArrayType, l: ListArray) =>
        val item = field.children.head
        val child = v.arrayData()
        child.reserve(l.child.length)
        write(child, item, l.child)
        putArrays(v, l.offsets, n)
      case (_: MapType, l: ListArray) =>
        val entries = field.children.head
        val kv = l.child match {
          case s: StructArray => s
          case other => throw new IllegalStateException(
              s"map '${field.name}' decoded as ${other.getClass.getSimpleName}"
            )
        }
        val keys = v.getChild(0); val values = v.getChild(1)
        keys.reserve(kv.length); values.reserve(kv.length)
        write(keys, entries.children(0), kv.children(0))
        write(values, entries.children(1), kv.children(1))
        putArrays(v, l.offsets, n)
      case (_: ArrayType, l: FixedSizeListArray) =>
        // A fixed-size list of primitives has no item field in Lance; one of structs has.
        val item = field.logicalType match {
          case FixedSizeList(t, _) if field.children.isEmpty =>
            field.copy(name = "item", logicalType = t, nullable = true, children = Nil)
          case _ => field.children.head
        }
        val child = v.arrayData()
        child.reserve(l.child.length)
        write(child, item, l.child)
        val d = l.dimension
        var i = 0
        while (i < n) { v.putArray(i, i * d, d); i += 1 }
      case (_: StringType | BinaryType, b: VarBinaryArray) =>
        val start = b.offsets(0)
        val total = b.offsets(n) - start
        val base = v.arrayData().appendBytes(total, b.data, start) - start
        var i = 0
        while (i < n) {
          v.putArray(i, base + b.offsets(i), b.offsets(i + 1) - b.offsets(i)); i += 1
        }
      case (_: StringType | BinaryType, d: DictionaryArray) => DictionaryVectors.write(v, d)
      case (dt, f: FixedWidthArray) => writeFixed(v, dt, field, f)
      case (dt, other) =>
        throw new IllegalStateException(
          s"column '${field.name}' (${field.logicalType.text}) decoded as " +
            s"${other.getClass.getSimpleName}, which does not fit Spark type ${dt.simpleString}"
        )
    }
    putNulls(v, a)
  }

  private def putArrays(v: WritableColumnVector, offsets: Array[Int], n: Int): Unit = {
    var i = 0
    while (i < n) { v.putArray(i, offsets(i), offsets(i + 1) - offsets(i)); i += 1 }
  }

  private def putNulls(v: WritableColumnVector, a: ColumnArray): Unit = {
    val nulls = a.nulls
    if (nulls != null) {
      var i = 0
      while (i < a.length) { if (nulls(i)) v.putNull(i); i += 1 }
    }
  }

  private def writeFixed(
      v: WritableColumnVector,
      dt: DataType,
      field: LanceField,
      f: FixedWidthArray
  ): Unit = {
    val n = f.length
    val d = f.data
    val t = field.logicalType match { case Dictionary(value, _, _) => value; case other => other }
    t match {
      case Bool => var i = 0; while (i < n) { v.putBoolean(i, d(i) != 0); i += 1 }
      case Int8 => v.putBytes(0, n, d, 0)
      case Int16 =>
        if (LE) v.putShorts(0, n, d, 0)
        else { var i = 0; while (i < n) { v.putShort(i, I16.get(d, i * 2)); i += 1 } }
      case Int32 | Date32 => v.putIntsLittleEndian(0, n, d, 0)
      case Int64 | Timestamp(TimeUnit.Micro | TimeUnit.Nano, _) | Duration(
            TimeUnit.Micro | TimeUnit.Nano
          ) |
          Time(TimeUnit.Micro | TimeUnit.Nano) => v.putLongsLittleEndian(0, n, d, 0)
      case Time(_) =>
        var i = 0; while (i < n) { v.putLong(i, (I32.get(d, i * 4): Int).toLong); i += 1 }
      case Float32 => v.putFloatsLittleEndian(0, n, d, 0)
      case Float64 => v.putDoublesLittleEndian(0, n, d, 0)
      case UInt8 => var i = 0; while (i < n) { v.putShort(i, (d(i) & 0xff).toShort); i += 1 }
      case UInt16 =>
        var i = 0; while (i < n) { v.putInt(i, (I16.get(d, i * 2): Short) & 0xffff); i += 1 }
      case UInt32 =>
        var i = 0; while (i < n) { v.putLong(i, (I32.get(d, i * 4): Int) & 0xffffffffL); i += 1 }
      case UInt64 =>
        var i = 0
        while (i < n) {
          val u = I64.get(d, i * 8): Long
          val big = if (u >= 0) java.math.BigInteger.valueOf(u)
          else java.math.BigInteger.valueOf(u).add(TwoTo64)
          if (!f.isNull(i)) v.putDecimal(
            i,
            org.apache.spark.sql.types.Decimal(new java.math.BigDecimal(big), 20, 0),
            20
          )
          i += 1
        }
      case BFloat16 =>
        var i = 0
        while (i < n) {
          v.putFloat(
            i,
            java.lang.Float.intBitsToFloat(((I16.get(d, i * 2): Short) & 0xffff) << 16)
          ); i += 1
        }
      case Float16 =>
        var i = 0;
        while (i < n) { v.putFloat(i, HalfFloat.toFloat(I16.get(d, i * 2): Short)); i += 1 }
      case Timestamp(unit, _) => scaleToMicros(v, field, f, unit)
      case Duration(unit) => scaleToMicros(v, field, f, unit)
      case Date64 =>
        var i = 0
        while (i < n) {
          v.putInt(i, Math.floorDiv(I64.get(d, i * 8): Long, 86400000L).toInt); i += 1
        }
      case LanceDecimal(_, _, _) => writeDecimal(v, dt.asInstanceOf[DecimalType], f)
      case FixedSizeBinary(w) => var i = 0; while (i < n) { v.putByteArray(i, d, i * w, w); i += 1 }
      case other =>
        throw LanceErrors.unsupportedType(
          field.name,
          other.text,
          s"no conversion to Spark ${dt.simpleString}"
        )
    }
  }

  private val TwoTo64 = java.math.BigInteger.ONE.shiftLeft(64)

  private def scaleToMicros(
      v: WritableColumnVector,
      field: LanceField,
      f: FixedWidthArray,
      unit: TimeUnit
  ): Unit = {
    val factor = 1000000L / unit.perSecond
    val d = f.data
    var i = 0
    while (i < f.length) {
      val raw = I64.get(d, i * 8): Long
      val micros =
        try Math.multiplyExact(raw, factor)
        catch {
          case _: ArithmeticException if f.isNull(i) => 0L
          case _: ArithmeticException =>
            throw LanceErrors.unsupportedType(
              field.name,
              field.logicalType.text,
              s"value $raw ${unit.symbol} is outside the range Spark can hold in microseconds"
            )
        }
      v.putLong(i, micros)
      i += 1
    }
  }

  /** 16- or 32-byte little-endian two's complement unscaled values into Spark decimals. */
  private def writeDecimal(v: WritableColumnVector, dt: DecimalType, f: FixedWidthArray): Unit = {
    val w = f.byteWidth
    val d = f.data
    var i = 0
    if (dt.precision <= org.apache.spark.sql.types.Decimal.MAX_LONG_DIGITS) {
      // Fits a long: the low 8 bytes are the value.
      val asInt = dt.precision <= org.apache.spark.sql.types.Decimal.MAX_INT_DIGITS
      while (i < f.length) {
        val x = I64.get(d, i * w): Long
        if (asInt) v.putInt(i, x.toInt) else v.putLong(i, x)
        i += 1
      }
    } else {
      val be = new Array[Byte](w)
      while (i < f.length) {
        if (!f.isNull(i)) {
          var k = 0
          while (k < w) { be(k) = d(i * w + w - 1 - k); k += 1 }
          val bd = new java.math.BigDecimal(new java.math.BigInteger(be), dt.scale)
          v.putDecimal(
            i,
            org.apache.spark.sql.types.Decimal(bd, dt.precision, dt.scale),
            dt.precision
          )
        }
        i += 1
      }
    }
  }
}
