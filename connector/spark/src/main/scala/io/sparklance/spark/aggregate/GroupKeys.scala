package io.sparklance.spark.aggregate

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnarBatch
import org.apache.spark.unsafe.types.UTF8String

/**
 * Turns each row's group-by values into longs for [[GroupTable]]: integers, dates, booleans
 * and decimals of at most 18 digits as themselves (unscaled); strings of at most 7 bytes
 * packed with their length, longer ones as the index of their first copy (kept here). The
 * last long is a mask of the NULL columns (a NULL's code is 0).
 */
final class GroupKeys(groups: Seq[GroupCol]) {
  val width: Int = groups.length + 1
  private val cols = groups.toArray
  private val probe = new Array[Long](width)
  /** How each column is read: 0 string, 1 long, 2 int, 3 short, 4 byte, 5 boolean. */
  private val kinds: Array[Int] = cols.map(_.dataType match {
    case StringType => 0
    case LongType | TimestampType | TimestampNTZType => 1
    case IntegerType | DateType => 2
    case d: DecimalType => if (d.precision <= 9) 2 else 1
    case ShortType => 3
    case ByteType => 4
    case BooleanType => 5
    case other => throw new IllegalStateException(s"cannot group by ${other.sql}")
  })
  private val long = new java.util.HashMap[UTF8String, Integer]()
  private val longValues = ArrayBuffer[UTF8String]()

  /** Fills `ids` with the group of each of the batch's `n` rows. */
  def assign(b: ColumnarBatch, n: Int, table: GroupTable, ids: Array[Int]): Unit = {
    var i = 0
    while (i < n) {
      var nulls = 0L
      var j = 0
      while (j < cols.length) {
        val v = b.column(cols(j).ordinal)
        if (v.isNullAt(i)) { nulls |= 1L << j; probe(j) = 0L }
        else probe(j) = (kinds(j): @annotation.switch) match {
          case 0 => code(v.getUTF8String(i))
          case 1 => v.getLong(i)
          case 2 => v.getInt(i).toLong
          case 3 => v.getShort(i).toLong
          case 4 => v.getByte(i).toLong
          case _ => if (v.getBoolean(i)) 1L else 0L
        }
        j += 1
      }
      probe(cols.length) = nulls
      ids(i) = table.idOf(probe)
      i += 1
    }
  }

  private def code(s: UTF8String): Long =
    if (s.numBytes() <= 7) s.getPrefix | s.numBytes()
    else {
      val known = long.get(s)
      val id =
        if (known != null) known.intValue()
        else {
          val c = s.clone()
          long.put(c, longValues.length)
          longValues += c
          longValues.length - 1
        }
      (id.toLong << 8) | 0xFF
    }

  /** Group `g`'s value of group column `j`, as Spark's InternalRow holds it. */
  def value(table: GroupTable, g: Int, j: Int): Any = {
    if ((table.key(g, cols.length) & (1L << j)) != 0) return null
    val c = table.key(g, j)
    cols(j).dataType match {
      case StringType =>
        val len = (c & 0xFF).toInt
        if (len == 0xFF) longValues((c >>> 8).toInt)
        else UTF8String.fromBytes(Array.tabulate(len)(k => (c >>> (56 - 8 * k)).toByte))
      case LongType | TimestampType | TimestampNTZType => c
      case IntegerType | DateType => c.toInt
      case d: DecimalType => org.apache.spark.sql.types.Decimal(c, d.precision, d.scale)
      case ShortType => c.toShort
      case ByteType => c.toByte
      case BooleanType => c != 0
      case other => throw new IllegalStateException(s"cannot group by ${other.sql}")
    }
  }
}

object GroupKeys {
  /** Types [[GroupKeys]] can key a group by. */
  def supports(t: DataType): Boolean = t match {
    case StringType | LongType | IntegerType | DateType | ShortType | ByteType | BooleanType |
         TimestampType | TimestampNTZType => true
    case d: DecimalType => d.precision <= 18
    case _ => false
  }
}
