package io.sparklance.spark.aggregate

import org.apache.spark.sql.types._

/**
 * The Spark type of an integer or decimal value as an aggregate expression computes it: a
 * decimal's precision and scale (scale 0 for integers), and the range its unscaled value must
 * stay in; leaving it fails as Spark's ANSI arithmetic does.
 */
final case class NumType(dataType: DataType) {
  val (precision, scale) = dataType match {
    case d: DecimalType => (d.precision, d.scale)
    case _ => (0, 0)
  }
  def isDecimal: Boolean = dataType.isInstanceOf[DecimalType]

  /** The bounds of the unscaled value as longs (whole longs for decimals of 19+ digits). */
  val (min, max): (Long, Long) = dataType match {
    case ByteType => (Byte.MinValue.toLong, Byte.MaxValue.toLong)
    case ShortType => (Short.MinValue.toLong, Short.MaxValue.toLong)
    case IntegerType => (Int.MinValue.toLong, Int.MaxValue.toLong)
    case LongType => (Long.MinValue, Long.MaxValue)
    case d: DecimalType if d.precision <= 18 =>
      (-(NumType.Pow10(d.precision) - 1), NumType.Pow10(d.precision) - 1)
    case _ => (Long.MinValue, Long.MaxValue)
  }

  /** Whether an exact value (at this type's scale) is representable. */
  def fits(v: java.math.BigDecimal): Boolean =
    if (isDecimal) v.precision() <= precision
    else v.unscaledValue().bitLength() < 64 &&
    v.longValueExact() >= min && v.longValueExact() <= max

  def overflow(what: String): ArithmeticException = new ArithmeticException(
    s"[NUMERIC_VALUE_OUT_OF_RANGE] the value of $what does not fit ${dataType.sql} " +
      "(while the Lance scan computed a pushed aggregate)"
  )
}

object NumType {
  val Pow10: Array[Long] = Array.iterate(1L, 19)(_ * 10)

  /** Integer types an aggregate expression may read from a column. */
  def integral(t: DataType): Boolean = t match {
    case ByteType | ShortType | IntegerType | LongType => true
    case _ => false
  }

  /** Types read as unscaled longs: integers and decimals of at most 18 digits. */
  def numeric(t: DataType): Boolean = integral(t) || (t match {
    case d: DecimalType => d.precision <= 18
    case _ => false
  })
}
