package io.sparklance.spark

import java.util.Base64

import com.fasterxml.jackson.databind.JsonNode
import com.fasterxml.jackson.databind.node.JsonNodeFactory
import org.apache.spark.sql.Row

import io.sparklance.format.{LanceField, LogicalType}
import io.sparklance.format.LogicalType._

/**
 * Values Spark returned, turned back into the fixtures' canonical JSON (the raw Lance value
 * in its own unit), so a test compares a Spark read with pylance's read value by value.
 * Expects `spark.sql.datetime.java8API.enabled=true` (Instant / LocalDate / LocalDateTime).
 */
object SparkRowJson {
  private val nf = JsonNodeFactory.withExactBigDecimals(true)

  def row(fields: Seq[LanceField], r: Row): Map[String, JsonNode] =
    fields.zipWithIndex.map { case (f, i) =>
      f.name -> value(f, if (r.isNullAt(i)) null else r.get(i))
    }.toMap

  def value(f: LanceField, v: Any): JsonNode = if (v == null) nf.nullNode()
  else (f.logicalType, v) match {
    case (Struct, r: Row) =>
      val o = nf.objectNode()
      f.children.zipWithIndex.foreach { case (c, i) =>
        o.set[JsonNode](c.name, value(c, if (r.isNullAt(i)) null else r.get(i)))
      }
      o
    case (Map, m: scala.collection.Map[_, _]) =>
      val Seq(k, vv) = f.children.head.children
      val a = nf.arrayNode()
      m.foreach { case (key, value1) =>
        a.add(nf.arrayNode().add(value(k, key)).add(value(vv, value1)))
      }
      a
    case (FixedSizeList(t, _), s: scala.collection.Seq[_]) =>
      val item = LanceField(-1, f.id, "item", t, nullable = true, Predef.Map.empty, Nil)
      val a = nf.arrayNode(); s.foreach(x => a.add(value(item, x))); a
    case (_, s: scala.collection.Seq[_]) =>
      val a = nf.arrayNode(); s.foreach(x => a.add(value(f.children.head, x))); a
    case (t, x) => leaf(t, x)
  }

  private def leaf(t: LogicalType, x: Any): JsonNode = (t, x) match {
    case (Dictionary(vt, _, _), _) => leaf(vt, x)
    case (_, b: Boolean) => nf.booleanNode(b)
    case (_, s: String) => nf.textNode(s)
    case (_, b: Array[Byte]) => nf.textNode(Base64.getEncoder.encodeToString(b))
    case (_, n: Byte) => nf.numberNode(n.toLong)
    case (_, n: Short) => nf.numberNode(n.toLong)
    case (_, n: Int) => nf.numberNode(n.toLong)
    case (_, n: Long) => nf.numberNode(n)
    case (_, d: Float) => float(d.toDouble)
    case (_, d: Double) => float(d)
    case (UInt64, d: java.math.BigDecimal) => nf.numberNode(d.toBigIntegerExact)
    case (_, d: java.math.BigDecimal) => nf.textNode(d.toString)
    case (Date32, d: java.time.LocalDate) => nf.numberNode(d.toEpochDay)
    case (Date64, d: java.time.LocalDate) => nf.numberNode(d.toEpochDay * 86400000L)
    case (Timestamp(u, _), i: java.time.Instant) =>
      nf.numberNode(fromMicros(
        Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), i.getNano / 1000L),
        u
      ))
    case (Timestamp(u, _), l: java.time.LocalDateTime) =>
      val i = l.toInstant(java.time.ZoneOffset.UTC)
      nf.numberNode(fromMicros(i.getEpochSecond * 1000000L + i.getNano / 1000L, u))
    case (Duration(u), d: java.time.Duration) =>
      nf.numberNode(fromMicros(d.getSeconds * 1000000L + d.getNano / 1000L, u))
    case (tt, other) => nf.textNode(s"<unexpected ${other.getClass.getName} for ${tt.text}>")
  }

  private def fromMicros(micros: Long, u: TimeUnit): Long = {
    val per = 1000000L / u.perSecond
    require(micros % per == 0, s"$micros us is not a whole number of ${u.symbol}")
    micros / per
  }

  private def float(d: Double): JsonNode =
    if (d.isNaN) nf.textNode("NaN")
    else if (d.isPosInfinity) nf.textNode("Infinity")
    else if (d.isNegInfinity) nf.textNode("-Infinity")
    else nf.numberNode(d)
}
