package io.sparklance.spark.aggregate

import java.math.{BigDecimal => JBigDecimal}

import org.apache.spark.sql.execution.vectorized.WritableColumnVector
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarBatch}
import org.apache.spark.unsafe.Platform

import io.sparklance.format.Utf8Validator

/**
 * An exact integer or decimal expression a pushed aggregate reads: columns, literals, `+`, `-`,
 * `*`, widening casts and the lengths of string columns, in Spark's types (see
 * [[PartialAggregateCompiler]]). The expression itself is immutable; each task evaluates it
 * with its own [[PartialExpr.Eval]], a batch at once on unscaled longs; a row whose value
 * leaves a long is marked [[PartialExpr.Big]] and asked again, as a BigDecimal, with
 * [[exact]]. A value beyond its type fails as Spark's ANSI arithmetic does.
 */
sealed abstract class PartialExpr extends Serializable {
  def t: NumType

  /** A new evaluator, with its own per-batch arrays. */
  def evaluator(): PartialExpr.Eval

  /** Row `i`'s value at `t.scale`, or null for SQL NULL. */
  def exact(b: ColumnarBatch, i: Int): JBigDecimal
}

object PartialExpr {
  val Ok: Byte = 0
  val Null: Byte = 1
  val Big: Byte = 2

  /** Evaluates an expression a batch at a time into `values` and `state`. */
  abstract class Eval {

    /** Unscaled values of the last batch, at the expression's scale. */
    var values: Array[Long] = new Array[Long](0)

    /** Per row: [[PartialExpr.Ok]], [[PartialExpr.Null]] or [[PartialExpr.Big]]. */
    var state: Array[Byte] = new Array[Byte](0)

    final def eval(b: ColumnarBatch, n: Int): Unit = {
      if (values.length < n) {
        values = new Array[Long](math.max(n, 1024))
        state = new Array[Byte](values.length)
      }
      compute(b, n)
    }

    protected def compute(b: ColumnarBatch, n: Int): Unit
  }

  /** Column `ordinal` of the batch, an integer or a decimal of at most 18 digits. */
  final case class Col(ordinal: Int, name: String, t: NumType) extends PartialExpr {
    private val asInt = t.dataType match {
      case ByteType | ShortType | IntegerType | DateType => true
      case d: DecimalType => d.precision <= 9
      case _ => false
    }
    private def read(v: ColumnVector, i: Int): Long = t.dataType match {
      case ByteType => v.getByte(i).toLong
      case ShortType => v.getShort(i).toLong
      case _ => if (asInt) v.getInt(i).toLong else v.getLong(i)
    }
    override def evaluator(): Eval = new Eval {
      override protected def compute(b: ColumnarBatch, n: Int): Unit = {
        val v = b.column(ordinal)
        val nulls = v.hasNull
        var i = 0
        t.dataType match {
          case ByteType | ShortType => while (i < n) { values(i) = read(v, i); i += 1 }
          case _ if asInt => while (i < n) { values(i) = v.getInt(i).toLong; i += 1 }
          case _ => while (i < n) { values(i) = v.getLong(i); i += 1 }
        }
        i = 0
        if (nulls) while (i < n) { state(i) = if (v.isNullAt(i)) Null else Ok; i += 1 }
        else java.util.Arrays.fill(state, 0, n, Ok)
      }
    }
    override def exact(b: ColumnarBatch, i: Int): JBigDecimal = {
      val v = b.column(ordinal)
      if (v.isNullAt(i)) null else JBigDecimal.valueOf(read(v, i), t.scale)
    }
    override def toString: String = name
  }

  /** A literal whose unscaled value fits a long. */
  final case class Lit(unscaled: Long, t: NumType) extends PartialExpr {
    override def evaluator(): Eval = new Eval {
      override protected def compute(b: ColumnarBatch, n: Int): Unit = {
        java.util.Arrays.fill(values, 0, n, unscaled)
        java.util.Arrays.fill(state, 0, n, Ok)
      }
    }
    override def exact(b: ColumnarBatch, i: Int): JBigDecimal =
      JBigDecimal.valueOf(unscaled, t.scale)
    override def toString: String = JBigDecimal.valueOf(unscaled, t.scale).toPlainString
  }

  /**
   * `left op right` for op `+`, `-` or `*`, in Spark's result type `t`: the compiler only
   * builds it where that type keeps the exact scale (no rounding), so the value is exact or
   * out of range.
   */
  final case class Arith(op: Char, left: PartialExpr, right: PartialExpr, t: NumType)
      extends PartialExpr {
    // Scale factors bringing each operand of + and - to the result's scale.
    private val lf = if (op == '*') 1L else NumType.Pow10(t.scale - left.t.scale)
    private val rf = if (op == '*') 1L else NumType.Pow10(t.scale - right.t.scale)

    override def evaluator(): Eval = new Eval {
      private val le = left.evaluator()
      private val re = right.evaluator()
      override protected def compute(b: ColumnarBatch, n: Int): Unit = {
        le.eval(b, n)
        re.eval(b, n)
        val lv = le.values; val ls = le.state; val rv = re.values; val rs = re.state
        val min = t.min; val max = t.max
        var i = 0
        while (i < n) {
          if (ls(i) == Null || rs(i) == Null) state(i) = Null
          else if (ls(i) == Big || rs(i) == Big) state(i) = Big
          else {
            var ok = true
            var a = lv(i); var c = rv(i)
            if (lf != 1L) {
              val h = Math.multiplyHigh(a, lf); a = a * lf; ok &= h == (a >> 63)
            }
            if (rf != 1L) {
              val h = Math.multiplyHigh(c, rf); c = c * rf; ok &= h == (c >> 63)
            }
            val r = op match {
              case '+' => val s = a + c; ok &= ((a ^ s) & (c ^ s)) >= 0; s
              case '-' => val s = a - c; ok &= ((a ^ c) & (a ^ s)) >= 0; s
              case _ =>
                val h = Math.multiplyHigh(a, c); val s = a * c; ok &= h == (s >> 63); s
            }
            if (!ok) state(i) = Big
            else if (r < min || r > max) throw t.overflow(Arith.this.toString)
            else { values(i) = r; state(i) = Ok }
          }
          i += 1
        }
      }
    }

    override def exact(b: ColumnarBatch, i: Int): JBigDecimal = {
      val l = left.exact(b, i)
      val r = right.exact(b, i)
      if (l == null || r == null) null
      else {
        val v = op match {
          case '+' => l.add(r)
          case '-' => l.subtract(r)
          case _ => l.multiply(r)
        }
        val scaled = v.setScale(t.scale) // exact: the result keeps the natural scale
        if (!t.fits(scaled)) throw t.overflow(toString)
        scaled
      }
    }
    override def toString: String = s"($left $op $right)"
  }

  /**
   * The length of string column `ordinal` as Spark's `length` (`CHAR_LENGTH`: characters) or
   * `bit_length` (`bits`: 8 per byte) gives it, an INT. A dictionary-encoded batch measures
   * each entry it uses once, not each row. (Spark hands sources neither of binary values.)
   */
  final case class Length(ordinal: Int, name: String, bits: Boolean) extends PartialExpr {
    val t: NumType = NumType(IntegerType)

    // An INT, wrapping past 256 MiB as Spark's bit_length does. The scan's strings are
    // well-formed UTF-8 (checked as they are read), so counting the bytes that start a
    // character, eight at a time, gives Spark's character count.
    private def of(v: ColumnVector, i: Int): Long = {
      val s = v.getUTF8String(i)
      if (bits) s.numBytes() * 8
      else s.getBaseObject match {
        case a: Array[Byte] =>
          val at = (s.getBaseOffset - Platform.BYTE_ARRAY_OFFSET).toInt
          Utf8Validator.charCount(a, at, at + s.numBytes())
        case _ => s.numChars()
      }
    }

    override def evaluator(): Eval = new Eval {
      private val lengths = new DictionaryMemo // per dictionary id of the batch

      override protected def compute(b: ColumnarBatch, n: Int): Unit = {
        val v = b.column(ordinal)
        val nulls = v.hasNull
        v match {
          case w: WritableColumnVector if w.hasDictionary => fromDictionary(w, n, nulls)
          case _ =>
            var i = 0
            while (i < n) {
              if (nulls && v.isNullAt(i)) state(i) = Null
              else { values(i) = of(v, i); state(i) = Ok }
              i += 1
            }
        }
      }

      private def fromDictionary(w: WritableColumnVector, n: Int, nulls: Boolean): Unit = {
        lengths.newBatch()
        val ids = w.getDictionaryIds
        var i = 0
        while (i < n) {
          if (nulls && w.isNullAt(i)) state(i) = Null
          else {
            val id = ids.getDictId(i)
            if (!lengths.known(id)) lengths(id) = of(w, i)
            values(i) = lengths(id)
            state(i) = Ok
          }
          i += 1
        }
      }
    }

    override def exact(b: ColumnarBatch, i: Int): JBigDecimal = {
      val v = b.column(ordinal)
      if (v.isNullAt(i)) null else JBigDecimal.valueOf(of(v, i))
    }
    override def toString: String = s"${if (bits) "bit_length" else "length"}($name)"
  }

  /** A cast that loses nothing but range: to a wider integer, or to a decimal of a larger scale. */
  final case class Widen(child: PartialExpr, t: NumType) extends PartialExpr {
    private val f = NumType.Pow10(t.scale - child.t.scale)
    override def evaluator(): Eval = new Eval {
      private val c = child.evaluator()
      override protected def compute(b: ColumnarBatch, n: Int): Unit = {
        c.eval(b, n)
        val cv = c.values; val cs = c.state
        var i = 0
        while (i < n) {
          if (cs(i) != Ok) state(i) = cs(i)
          else {
            val h = Math.multiplyHigh(cv(i), f); val r = cv(i) * f
            if (h != (r >> 63)) state(i) = Big
            else if (r < t.min || r > t.max) throw t.overflow(Widen.this.toString)
            else { values(i) = r; state(i) = Ok }
          }
          i += 1
        }
      }
    }
    override def exact(b: ColumnarBatch, i: Int): JBigDecimal = {
      val v = child.exact(b, i)
      if (v == null) null
      else {
        val scaled = v.setScale(t.scale)
        if (!t.fits(scaled)) throw t.overflow(toString)
        scaled
      }
    }
    override def toString: String = s"CAST($child AS ${t.dataType.sql})"
  }
}
