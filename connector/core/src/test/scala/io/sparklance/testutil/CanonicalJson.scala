package io.sparklance.testutil

import java.math.{BigDecimal => JBigDecimal, BigInteger}
import java.nio.{ByteBuffer, ByteOrder}
import java.util.Base64

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.{ArrayNode, JsonNodeFactory, ObjectNode}

import io.sparklance.format._
import io.sparklance.format.LogicalType._

/**
 * Decoded arrays in the fixtures' canonical JSON encoding (src-test-data/generate.py), so a
 * test can compare what we decode with what pylance read, value by value.
 */
object CanonicalJson {
  private val nf = JsonNodeFactory.withExactBigDecimals(true)

  /** Row `i` of `a`, which holds values of `field`. */
  def value(field: LanceField, a: ColumnArray, i: Int): JsonNode = {
    if (a.isNull(i)) return nf.nullNode()
    (field.logicalType, a) match {
      case (Struct, s: StructArray) =>
        val o = nf.objectNode()
        field.children.zip(s.children).foreach { case (c, ca) =>
          o.set[JsonNode](c.name, value(c, ca, i))
        }
        o
      case (Map, l: ListArray) =>
        val entries = field.children.head
        val kv = l.child.asInstanceOf[StructArray]
        val arr = nf.arrayNode()
        (l.offsets(i) until l.offsets(i + 1)).foreach { j =>
          arr.add(nf.arrayNode().add(value(entries.children(0), kv.children(0), j)).add(value(
            entries.children(1),
            kv.children(1),
            j
          )))
        }
        arr
      case (_, l: ListArray) =>
        val item = field.children.head
        val arr = nf.arrayNode()
        (l.offsets(i) until l.offsets(i + 1)).foreach(j => arr.add(value(item, l.child, j)))
        arr
      case (FixedSizeList(t, _), l: FixedSizeListArray) =>
        val item = field.children.headOption.getOrElse(LanceField(
          -1,
          field.id,
          "item",
          t,
          nullable = true,
          Predef.Map.empty,
          Nil
        ))
        val arr = nf.arrayNode()
        (i * l.dimension until (i + 1) * l.dimension).foreach(j => arr.add(value(item, l.child, j)))
        arr
      case (_, d: DictionaryArray) =>
        leafBytes(field.logicalType, d.dictionary.entries(d.indices(i)))
      case (_, b: VarBinaryArray) =>
        val bytes = java.util.Arrays.copyOfRange(b.data, b.offsets(i), b.offsets(i + 1))
        leafBytes(field.logicalType, bytes)
      case (t, f: FixedWidthArray) => fixed(t, f, i)
      case (t, other) =>
        nf.textNode(s"<cannot encode ${t.text} from ${other.getClass.getSimpleName}>")
    }
  }

  private def leafBytes(t: LogicalType, bytes: Array[Byte]): JsonNode = t match {
    case Utf8 | LargeUtf8 => nf.textNode(new String(bytes, "UTF-8"))
    case Dictionary(v, _, _) => leafBytes(v, bytes)
    case _ => nf.textNode(Base64.getEncoder.encodeToString(bytes))
  }

  private def fixed(t: LogicalType, f: FixedWidthArray, i: Int): JsonNode = {
    val w = f.byteWidth
    val b = ByteBuffer.wrap(f.data, i * w, w).order(ByteOrder.LITTLE_ENDIAN)
    t match {
      case Bool => nf.booleanNode(f.data(i) != 0)
      case Int8 => nf.numberNode(b.get().toLong)
      case UInt8 => nf.numberNode((b.get() & 0xff).toLong)
      case Int16 => nf.numberNode(b.getShort().toLong)
      case UInt16 => nf.numberNode((b.getShort() & 0xffff).toLong)
      case Int32 | Date32 => nf.numberNode(b.getInt().toLong)
      case UInt32 => nf.numberNode(b.getInt() & 0xffffffffL)
      case Time(_) if w == 4 => nf.numberNode(b.getInt().toLong)
      case Int64 | Date64 | Timestamp(_, _) | Duration(_) | Time(_) => nf.numberNode(b.getLong())
      case UInt64 => nf.numberNode(new BigInteger(java.lang.Long.toUnsignedString(b.getLong())))
      case Float16 => float(HalfFloat.toFloat(b.getShort()).toDouble)
      case BFloat16 => float(java.lang.Float.intBitsToFloat((b.getShort() & 0xffff) << 16).toDouble)
      case Float32 => float(b.getFloat().toDouble)
      case Float64 => float(b.getDouble())
      case Decimal(_, _, scale) =>
        val be = new Array[Byte](w)
        (0 until w).foreach(k => be(k) = f.data(i * w + w - 1 - k))
        nf.textNode(new JBigDecimal(new BigInteger(be), scale).toString)
      case FixedSizeBinary(_) =>
        nf.textNode(Base64.getEncoder.encodeToString(java.util.Arrays.copyOfRange(
          f.data,
          i * w,
          i * w + w
        )))
      case Dictionary(v, _, _) => fixed(v, f, i)
      case other => nf.textNode(s"<cannot encode ${other.text}>")
    }
  }

  private def float(d: Double): JsonNode =
    if (d.isNaN) nf.textNode("NaN")
    else if (d.isPosInfinity) nf.textNode("Infinity")
    else if (d.isNegInfinity) nf.textNode("-Infinity")
    else nf.numberNode(d)

  /**
   * Whether `actual` (from [[value]]) equals `expected` (parsed from a fixture). Integers
   * compare exactly as big integers; floating-point values as doubles, bit for bit (so -0.0
   * differs from 0.0), which is exact because the fixtures print shortest round-trip reprs.
   */
  def same(expected: JsonNode, actual: JsonNode): Boolean = (expected, actual) match {
    case (e, a) if e.isNull || a.isNull => e.isNull && a.isNull
    case (e, a) if e.isNumber && a.isNumber =>
      if (e.isFloatingPointNumber || a.isFloatingPointNumber)
        java.lang.Double.compare(e.doubleValue(), a.doubleValue()) == 0
      else e.bigIntegerValue() == a.bigIntegerValue()
    case (e: ArrayNode, a: ArrayNode) =>
      e.size == a.size && (0 until e.size).forall(k => same(e.get(k), a.get(k)))
    case (e: ObjectNode, a: ObjectNode) =>
      e.size == a.size && {
        val it = e.fields(); var ok = true;
        while (ok && it.hasNext) {
          val x = it.next(); ok = a.has(x.getKey) && same(x.getValue, a.get(x.getKey))
        }; ok
      }
    case (e, a) => e == a
  }
}
