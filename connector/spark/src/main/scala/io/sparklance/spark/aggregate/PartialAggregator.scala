package io.sparklance.spark.aggregate

import java.math.BigInteger

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.sql.vectorized.ColumnarBatch

/**
 * One task's partial aggregation: batches of the input columns go in (`add`), one row per
 * group comes out (`result`); without group-by columns, exactly one row, even for no input,
 * as Spark's partial aggregates do.
 *
 * Spark adds the partials up, so a group may come out in several rows: once `maxGroups`
 * groups are held, they are handed out and forgotten, which bounds the task's memory whatever
 * the number of groups (Spark's own partial aggregation spills instead).
 *
 * Spark casts a decimal SUM's partial value to the summed expression's own type before it adds
 * the partials up. A partial too large for it is returned in several rows of the same group,
 * each within that type, the extra rows NULL in every other function (which Spark's final
 * SUM, MIN, MAX and COUNT-as-SUM skip).
 */
final class PartialAggregator(
    spec: PartialAggregate,
    maxGroups: Int = PartialAggregator.MaxGroups
) {
  private val grouped = spec.groups.nonEmpty
  private val keys = new GroupKeys(spec.groups)
  private var table = new GroupTable(keys.width)
  private var ids = new Array[Int](1024)
  private val states: Array[AggState] = spec.aggs.map(AggState.of).toArray

  /** The groups were handed out: the next batch starts afresh. */
  private var flushed = false

  /**
   * Folds in batch `b`; returns the rows to hand to Spark now: none until `maxGroups` groups
   * are held. They must be read before the next call.
   */
  def add(b: ColumnarBatch): Iterator[InternalRow] = {
    if (flushed) restart()
    val n = b.numRows()
    if (n == 0) return Iterator.empty
    if (ids.length < n) ids = new Array[Int](n)
    if (grouped) keys.assign(b, n, table, ids)
    else java.util.Arrays.fill(ids, 0, n, 0)
    val groups = if (grouped) table.size else 1
    states.foreach(_.add(b, n, ids, groups))
    if (grouped && groups >= maxGroups) { flushed = true; groupRows() }
    else Iterator.empty
  }

  /** The rows of the groups not handed out yet: the last of the task's partials. */
  def result(): Iterator[InternalRow] = {
    if (flushed) restart()
    groupRows()
  }

  private def restart(): Unit = {
    states.foreach(_.reset(table.size))
    table = new GroupTable(keys.width)
    keys.forget()
    flushed = false
  }

  private def groupRows(): Iterator[InternalRow] = {
    val t = table
    val groups = if (grouped) t.size else 1
    states.foreach(_.ensure(groups))
    Iterator.range(0, groups).flatMap(rowsOf(t, _))
  }

  /** The row of group `g` of `t` (and the extra rows of a decimal SUM too large for one). */
  private def rowsOf(t: GroupTable, g: Int): Iterator[InternalRow] = {
    val k = spec.groups.length
    val width = k + states.length
    val row = new Array[Any](width)
    var j = 0
    while (j < k) { row(j) = keys.value(t, g, j); j += 1 }
    var extra: List[InternalRow] = Nil
    var a = 0
    while (a < states.length) {
      val parts = states(a).values(g)
      row(k + a) = parts.head
      parts.tail.foreach { p =>
        val r = new Array[Any](width)
        System.arraycopy(row, 0, r, 0, k)
        r(k + a) = p
        extra = new GenericInternalRow(r) :: extra
      }
      a += 1
    }
    val first = new GenericInternalRow(row)
    if (extra.isEmpty) Iterator.single(first) else Iterator.single(first) ++ extra.reverse
  }
}

object PartialAggregator {

  /** Groups a task holds at most before it hands them out. */
  val MaxGroups: Int = 1 << 20
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

  /** Forgets groups `[0, groups)`, the only ones used since the last reset. */
  def reset(groups: Int): Unit
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
    override def reset(groups: Int): Unit = java.util.Arrays.fill(counts, 0, groups min size, 0L)
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
    override def reset(groups: Int): Unit = {
      val g = groups min size
      java.util.Arrays.fill(sums, 0, g, 0L)
      java.util.Arrays.fill(seen, 0, g, false)
      java.util.Arrays.fill(bigs.asInstanceOf[Array[AnyRef]], 0, g, null)
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

    private val out = f.dataType match { case d: DecimalType => d; case _ => null }

    override def values(g: Int): Seq[Any] =
      if (!seen(g)) Seq(null)
      else if (!decimal) Seq(sums(g))
      else if (bigs(g) == null && sums(g) >= e.t.min && sums(g) <= e.t.max) {
        // Most groups: the sum fits one row of the summed type (SUM keeps its scale), and its
        // unscaled long becomes the decimal as is.
        Seq(Decimal(sums(g), out.precision, out.scale))
      } else {
        val total = if (bigs(g) != null) bigs(g) else BigInteger.valueOf(sums(g))
        val limit = BigInteger.TEN.pow(e.t.precision).subtract(BigInteger.ONE)
        val chunks = total.abs().subtract(BigInteger.ONE).divide(limit) // 0 when it fits
        val step = if (total.signum() < 0) limit.negate() else limit
        val head = total.subtract(step.multiply(chunks))
        def dec(u: BigInteger) = Decimal(
          new java.math.BigDecimal(u, e.t.scale),
          out.precision,
          out.scale
        )
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
    override def reset(groups: Int): Unit = {
      java.util.Arrays.fill(best, 0, groups min size, 0L)
      java.util.Arrays.fill(seen, 0, groups min size, false)
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
