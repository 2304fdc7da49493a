package io.sparklance.spark.aggregate

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.execution.vectorized.WritableColumnVector
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

  /** Per column then row: the batch's codes, then its NULL masks (reused across batches). */
  private var codes = new Array[Long](0)

  /** Fills `ids` with the group of each of the batch's `n` rows. */
  def assign(b: ColumnarBatch, n: Int, table: GroupTable, ids: Array[Int]): Unit = {
    if (codes.length < n * width) codes = new Array[Long](math.max(n, 1024) * width)
    val c = codes
    val maskAt = cols.length * n
    java.util.Arrays.fill(c, maskAt, maskAt + n, 0L)
    var j = 0
    while (j < cols.length) {
      val v = b.column(cols(j).ordinal)
      val at = j * n
      var i = 0
      (kinds(j): @annotation.switch) match {
        case 0 =>
          val nulls = v.hasNull
          v match {
            case w: WritableColumnVector if w.hasDictionary => fromDictionary(w, j, n, c, at)
            case _ =>
              while (i < n) {
                c(at + i) = if (nulls && v.isNullAt(i)) 0L else code(v.getUTF8String(i))
                i += 1
              }
          }
        case 1 => while (i < n) { c(at + i) = v.getLong(i); i += 1 }
        case 2 => while (i < n) { c(at + i) = v.getInt(i).toLong; i += 1 }
        case 3 => while (i < n) { c(at + i) = v.getShort(i).toLong; i += 1 }
        case 4 => while (i < n) { c(at + i) = v.getByte(i).toLong; i += 1 }
        case _ => while (i < n) { c(at + i) = if (v.getBoolean(i)) 1L else 0L; i += 1 }
      }
      if (v.hasNull) {
        val bit = 1L << j
        i = 0
        while (i < n) {
          if (v.isNullAt(i)) { c(at + i) = 0L; c(maskAt + i) |= bit }
          i += 1
        }
      }
      j += 1
    }
    var i = 0
    while (i < n) {
      j = 0
      while (j < width) { probe(j) = c(j * n + i); j += 1 }
      ids(i) = table.idOf(probe)
      i += 1
    }
  }

  /** Per string column: the code of each dictionary id of the current batch. */
  private val idCodes = Array.fill(cols.length)(new DictionaryMemo)

  /**
   * Codes of a dictionary-encoded string column (`w`, column `j`) into `c` from `at`: each
   * entry's code is worked out once a batch, not once a row (no string hashed or made per row).
   */
  private def fromDictionary(
      w: WritableColumnVector,
      j: Int,
      n: Int,
      c: Array[Long],
      at: Int
  ): Unit = {
    val memo = idCodes(j)
    memo.newBatch()
    val nulls = w.hasNull
    val ids = w.getDictionaryIds
    var i = 0
    while (i < n) {
      if (nulls && w.isNullAt(i)) c(at + i) = 0L
      else {
        val id = ids.getDictId(i)
        if (!memo.known(id)) memo(id) = code(w.getUTF8String(i))
        c(at + i) = memo(id)
      }
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
      (id.toLong << 8) | 0xff
    }

  /** Forgets the long strings seen: the groups holding their codes were handed out. */
  def forget(): Unit = { long.clear(); longValues.clear() }

  /** Group `g`'s value of group column `j`, as Spark's InternalRow holds it. */
  def value(table: GroupTable, g: Int, j: Int): Any = {
    if ((table.key(g, cols.length) & (1L << j)) != 0) return null
    val c = table.key(g, j)
    cols(j).dataType match {
      case StringType =>
        val len = (c & 0xff).toInt
        if (len == 0xff) longValues((c >>> 8).toInt)
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
