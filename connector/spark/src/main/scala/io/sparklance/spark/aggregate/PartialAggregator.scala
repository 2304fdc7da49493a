package io.sparklance.spark.aggregate

import java.math.BigInteger

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * One task's partial aggregation: batches of the input columns go in (`add`), one row per
 * group comes out (`result`); without group-by columns, exactly one row, even for no input,
 * as Spark's partial aggregates do.
 *
 * Spark casts a decimal SUM's partial value to the summed expression's own type before it adds
 * the partials up. A partial too large for it is returned in several rows of the same group,
 * each within that type, the extra rows NULL in every other function (which Spark's final
 * SUM, MIN, MAX and COUNT-as-SUM skip).
 */
final class PartialAggregator(spec: PartialAggregate) {
  private val keys = new GroupKeys(spec.groups)
  private val table = new GroupTable(keys.width)
  private var ids = new Array[Int](1024)
  private val states: Array[AggState] = spec.aggs.map(AggState.of).toArray

  def add(b: ColumnarBatch): Unit = {
    val n = b.numRows()
    if (n == 0) return
    if (ids.length < n) ids = new Array[Int](n)
    if (spec.groups.nonEmpty) keys.assign(b, n, table, ids)
    else java.util.Arrays.fill(ids, 0, n, 0)
    val groups = if (spec.groups.isEmpty) 1 else table.size
    states.foreach(_.add(b, n, ids, groups))
  }

  def result(): Iterator[InternalRow] = {
    val groups = if (spec.groups.isEmpty) 1 else table.size
    states.foreach(_.ensure(groups))
    val k = spec.groups.length
    Iterator.range(0, groups).flatMap { g =>
      val row = new Array[Any](k + states.length)
      var j = 0
      while (j < k) { row(j) = keys.value(table, g, j); j += 1 }
      val extra = ArrayBuffer[InternalRow]()
      states.zipWithIndex.foreach { case (s, a) =>
        val parts = s.values(g)
        row(k + a) = parts.head
        parts.tail.foreach { p =>
          val r = new Array[Any](k + states.length)
          System.arraycopy(row, 0, r, 0, k)
          r(k + a) = p
          extra += new GenericInternalRow(r)
        }
      }
      Iterator.single(new GenericInternalRow(row): InternalRow) ++ extra
    }
  }
}

/** The running partial value of one aggregate function, per group id. */
private abstract class AggState {
  protected var size = 0
  /** Grows the per-group arrays to hold `groups` groups. */
  def ensure(groups: Int): Unit = if (groups > size) {
    val cap = math.max(groups, math.max(16, size * 2))
    grow(cap)
    size = cap
  }
  protected def grow(cap: Int): Unit
  def add(b: ColumnarBatch, n: Int, ids: Array[Int], groups: Int): Unit
  /** Group `g`'s partial value; more than one only for a decimal SUM too large for one row. */
  def values(g: Int): Seq[Any]
}

private object AggState {
  def of(f: AggFn): AggState = f match {
    case AggFn.CountAll => new Count(None)
    case AggFn.CountOf(e) => new Count(Some(e))
    case s: AggFn.SumOf => new Sum(s)
    case e: AggFn.Extreme => new Extreme(e)
  }

  final class Count(expr: Option[PartialExpr]) extends AggState {
    private val ev = expr.map(_.evaluator())
    private var counts = new Array[Long](0)
    override protected def grow(cap: Int): Unit = counts = java.util.Arrays.copyOf(counts, cap)
    override def add(b: ColumnarBatch, n: Int, ids: Array[Int], groups: Int): Unit = {
      ensure(groups)
      var i = 0
      ev match {
        case None => while (i < n) { counts(ids(i)) += 1; i += 1 }
        case Some(e) =>
          e.eval(b, n)
          val st = e.state
          while (i < n) { if (st(i) != PartialExpr.Null) counts(ids(i)) += 1; i += 1 }
      }
    }
    override def values(g: Int): Seq[Any] = Seq(counts(g))
  }

  final class Sum(f: AggFn.SumOf) extends AggState {
    private val e = f.expr
    private val ev = e.evaluator()
    private val decimal = e.t.isDecimal
    private var sums = new Array[Long](0)
    private var seen = new Array[Boolean](0)
    private var bigs = new Array[BigInteger](0) // set once a group's sum leaves a long
    override protected def grow(cap: Int): Unit = {
      sums = java.util.Arrays.copyOf(sums, cap)
      seen = java.util.Arrays.copyOf(seen, cap)
      bigs = java.util.Arrays.copyOf(bigs, cap)
    }
    override def add(b: ColumnarBatch, n: Int, ids: Array[Int], groups: Int): Unit = {
      ensure(groups)
      ev.eval(b, n)
      val v = ev.values; val st = ev.state
      var i = 0
      while (i < n) {
        val g = ids(i)
        if (st(i) == PartialExpr.Ok) {
          seen(g) = true
          if (bigs(g) != null) bigs(g) = bigs(g).add(BigInteger.valueOf(v(i)))
          else {
            val a = sums(g); val s = a + v(i)
            if (((a ^ s) & (v(i) ^ s)) < 0) overflowed(g, BigInteger.valueOf(v(i)))
            else sums(g) = s
          }
        } else if (st(i) == PartialExpr.Big) {
          seen(g) = true
          overflowed(g, e.exact(b, i).unscaledValue())
        }
        i += 1
      }
    }
    private def overflowed(g: Int, v: BigInteger): Unit =
      if (decimal) {
        val base = if (bigs(g) != null) bigs(g) else BigInteger.valueOf(sums(g))
        bigs(g) = base.add(v)
      } else if (f.ansi) throw NumType(LongType).overflow(s"SUM($e)")
      else sums(g) += v.longValue() // Spark's non-ANSI SUM of integers wraps around

    override def values(g: Int): Seq[Any] =
      if (!seen(g)) Seq(null)
      else if (!decimal) Seq(sums(g))
      else {
        val total = if (bigs(g) != null) bigs(g) else BigInteger.valueOf(sums(g))
        val out = f.dataType.asInstanceOf[DecimalType]
        val limit = BigInteger.TEN.pow(e.t.precision).subtract(BigInteger.ONE)
        val chunks = total.abs().subtract(BigInteger.ONE).divide(limit) // 0 when it fits
        val step = if (total.signum() < 0) limit.negate() else limit
        val head = total.subtract(step.multiply(chunks))
        def dec(u: BigInteger) = Decimal(
          new java.math.BigDecimal(u, e.t.scale), out.precision, out.scale)
        if (chunks.signum() == 0) Seq(dec(total))
        else dec(head) +: Iterator.continually(dec(step)).take(chunks.intValueExact()).toSeq
      }
  }

  final class Extreme(f: AggFn.Extreme) extends AggState {
    private val ev = f.value.evaluator()
    private var best = new Array[Long](0)
    private var seen = new Array[Boolean](0)
    override protected def grow(cap: Int): Unit = {
      best = java.util.Arrays.copyOf(best, cap)
      seen = java.util.Arrays.copyOf(seen, cap)
    }
    override def add(b: ColumnarBatch, n: Int, ids: Array[Int], groups: Int): Unit = {
      ensure(groups)
      ev.eval(b, n)
      val v = ev.values; val st = ev.state
      var i = 0
      while (i < n) {
        if (st(i) == PartialExpr.Ok) {
          val g = ids(i)
          if (!seen(g) || (if (f.isMax) v(i) > best(g) else v(i) < best(g))) {
            best(g) = v(i); seen(g) = true
          }
        }
        i += 1
      }
    }
    override def values(g: Int): Seq[Any] =
      if (!seen(g)) Seq(null)
      else Seq(f.dataType match {
        case d: DecimalType => Decimal(best(g), d.precision, d.scale)
        case LongType => best(g)
        case ShortType => best(g).toShort
        case ByteType => best(g).toByte
        case _ => best(g).toInt
      })
  }
}
