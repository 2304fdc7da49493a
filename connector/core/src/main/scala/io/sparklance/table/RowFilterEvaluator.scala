package io.sparklance.table

import java.lang.invoke.{MethodHandles, VarHandle}
import java.nio.{ByteBuffer, ByteOrder}

import io.sparklance.format._
import io.sparklance.format.LogicalType._
import io.sparklance.table.FilterValue._
import io.sparklance.table.RowFilter._

/** How the evaluator reads one column's values. */
sealed trait FilterDomain
object FilterDomain {

  /** Fixed-width integers (booleans, dates, microsecond timestamps too), widened to long. */
  final case class Integral(byteWidth: Int, signed: Boolean) extends FilterDomain

  /** float32 or float64, widened to double (exact, order-preserving). */
  final case class Floating(byteWidth: Int) extends FilterDomain

  /** UTF-8 strings, compared as unsigned bytes. */
  case object Utf8Bytes extends FilterDomain

  /**
   * 128-bit decimals, as their unscaled values (literals at the column's scale); values beyond
   * a long saturate to Long.MinValue / Long.MaxValue, so literals must lie strictly between.
   */
  case object Decimal128 extends FilterDomain

  /**
   * The domain of a top-level column, or None when the reader does not evaluate predicates
   * on it (nested types, 256-bit decimals, binary, half floats, non-microsecond times, ...).
   * Which Spark literal types fit a domain is the Spark layer's business.
   */
  def of(field: LanceField): Option[FilterDomain] =
    if (field.children.nonEmpty) None
    else (field.logicalType match { case Dictionary(v, _, _) => v; case t => t }) match {
      case Bool | Int8 => Some(Integral(1, signed = true))
      case Int16 => Some(Integral(2, signed = true))
      case Int32 | Date32 => Some(Integral(4, signed = true))
      case Int64 | Timestamp(TimeUnit.Micro, _) => Some(Integral(8, signed = true))
      case UInt8 => Some(Integral(1, signed = false))
      case UInt16 => Some(Integral(2, signed = false))
      case UInt32 => Some(Integral(4, signed = false))
      case Float32 => Some(Floating(4))
      case Float64 => Some(Floating(8))
      case Utf8 | LargeUtf8 => Some(Utf8Bytes)
      case LogicalType.Decimal(128, _, _) => Some(Decimal128)
      case _ => None
    }
}

/**
 * Evaluates a [[RowFilter]] over one batch of decoded columns, giving for each row whether
 * the predicate is TRUE. Each leaf runs one tight loop over primitive arrays: a column's
 * values are widened once per batch into a reused long or double buffer, then compared with
 * the literal; no per-value allocation or virtual call.
 *
 * Semantics follow Spark SQL: null values make comparisons UNKNOWN (dropped); doubles order
 * NaN above every other value and equal to itself, and -0.0 equals 0.0; strings compare as
 * unsigned UTF-8 bytes (Spark's default UTF8_BINARY collation).
 */
final class RowFilterEvaluator(val filter: RowFilter, fields: Map[String, LanceField]) {
  import RowFilterEvaluator._

  private val domains: Map[String, FilterDomain] = filter.columns.iterator.map { c =>
    val f = fields.getOrElse(
      c,
      throw new IllegalArgumentException(s"filter column '$c' is not in the schema")
    )
    c -> FilterDomain.of(f).getOrElse(
      throw new IllegalArgumentException(
        s"filter column '$c' (${f.logicalType.text}) cannot be evaluated by the reader"
      )
    )
  }.toMap

  /**
   * The literal sets of the filter's IN leaves, sorted once for binary search (longs, or a
   * [[LongBits]] bitmap when long and dense; doubles normalized; strings as unsigned bytes).
   * Keyed by node identity: equal leaves may appear more than once, each maps to its own
   * (equal) set.
   */
  private val inSets: java.util.IdentityHashMap[In, AnyRef] = {
    val m = new java.util.IdentityHashMap[In, AnyRef]()
    def visit(f: RowFilter): Unit = f match {
      case And(l, r) => visit(l); visit(r)
      case Or(l, r) => visit(l); visit(r)
      case in @ In(c, values, _) =>
        val d = domains(c)
        // Values not of the column's kind: fail naming the first one that is not.
        values.find(v => !ofKind(d, v)).foreach(bad(c, _))
        // All of the column's kind: `prepared` is the set of that kind (null when empty).
        m.put(
          in,
          if (values.nonEmpty) in.prepared
          else d match {
            case _: FilterDomain.Floating => Array.emptyDoubleArray
            case FilterDomain.Utf8Bytes => Array.empty[Array[Byte]]
            case _ => Array.emptyLongArray
          }
        )
      case _ =>
    }
    visit(filter)
    m
  }

  private val longBuffers = scala.collection.mutable.HashMap[String, Array[Long]]()
  private val doubleBuffers = scala.collection.mutable.HashMap[String, Array[Double]]()

  /** Top-level columns the filter reads. */
  def columns: Set[String] = filter.columns

  /** `result(i)` is true when row i satisfies the filter; `columns` holds every filter column. */
  def evaluate(columns: String => ColumnArray, n: Int): Array[Boolean] = {
    val acc = new Array[Boolean](n)
    java.util.Arrays.fill(acc, true)
    andInto(filter, new Batch(columns, n), acc)
    acc
  }

  private final class Batch(val arrays: String => ColumnArray, val n: Int) {
    private val longs = scala.collection.mutable.HashMap[String, Array[Long]]()
    private val doubles = scala.collection.mutable.HashMap[String, Array[Double]]()
    def longsOf(c: String, d: FilterDomain): Array[Long] = longs.getOrElseUpdate(
      c, {
        val buf =
          longBuffers.get(c).filter(_.length >= n).getOrElse(new Array[Long](math.max(n, 1024)))
        longBuffers(c) = buf
        d match {
          case i: FilterDomain.Integral => widenLongs(arrays(c), i, buf)
          case _ => saturateDecimals(arrays(c), buf)
        }
      }
    )
    def doublesOf(c: String, d: FilterDomain.Floating): Array[Double] = doubles.getOrElseUpdate(
      c, {
        val buf =
          doubleBuffers.get(c).filter(_.length >= n).getOrElse(new Array[Double](math.max(n, 1024)))
        doubleBuffers(c) = buf
        widenDoubles(arrays(c), d, buf)
      }
    )
  }

  /**
   * ANDs the truth of `f` into `acc`: leaves clear the rows they reject, so a conjunction is
   * evaluated in place, with no array per node, and stops once no row is left.
   */
  private def andInto(f: RowFilter, b: Batch, acc: Array[Boolean]): Unit = f match {
    case Const(v) => if (!v) java.util.Arrays.fill(acc, false)
    case And(l, r) => andInto(l, b, acc); if (anyTrue(acc)) andInto(r, b, acc)
    case Or(l, r) =>
      val x = acc.clone(); andInto(l, b, x)
      val y = acc.clone(); andInto(r, b, y)
      var i = 0; while (i < b.n) { acc(i) = x(i) | y(i); i += 1 }
    case IsNull(c, negated) =>
      val nl = b.arrays(c).nulls
      if (nl == null) { if (!negated) java.util.Arrays.fill(acc, false) }
      else { var i = 0; while (i < b.n) { acc(i) &= nl(i) != negated; i += 1 } }
    case leaf if b.arrays(leaf.columns.head).isInstanceOf[NullArray] =>
      java.util.Arrays.fill(
        acc,
        false
      ) // the column is all null here (e.g. added after this fragment): never TRUE
    case Compare(c, op, v) =>
      (domains(c), v) match {
        case (d: FilterDomain.Integral, LongValue(lit)) =>
          andCompareLongs(b.longsOf(c, d), lit, op, acc, b.n)
        case (FilterDomain.Decimal128, LongValue(lit)) =>
          andCompareLongs(b.longsOf(c, FilterDomain.Decimal128), lit, op, acc, b.n)
        case (d: FilterDomain.Floating, DoubleValue(lit)) =>
          andCompareDoubles(b.doublesOf(c, d), lit, op, acc, b.n)
        case (FilterDomain.Utf8Bytes, BytesValue(lit)) =>
          andBytes(b.arrays(c), acc, b.n)((v, out, m) =>
            andCompareBytes(v, lit, acceptMask(op), out, m)
          )
        case (d, _) =>
          throw new IllegalArgumentException(s"filter literal $v does not fit column '$c' ($d)")
      }
      andNotNull(b.arrays(c), acc)
    case Remainder(c, divisor, op, lit) =>
      val mask = acceptMask(op)
      domains(c) match {
        case d: FilterDomain.Integral =>
          val vs = b.longsOf(c, d)
          var i = 0
          while (i < b.n) {
            acc(i) &= ((mask >> (java.lang.Long.compare(vs(i) % divisor, lit) + 1)) & 1) != 0;
            i += 1
          }
        case d => throw new IllegalArgumentException(s"remainder filter on column '$c' ($d)")
      }
      andNotNull(b.arrays(c), acc)
    case in @ In(c, _, negated) =>
      val prepared = inSets.get(in)
      domains(c) match {
        case d @ (_: FilterDomain.Integral | FilterDomain.Decimal128) =>
          val vs = b.longsOf(c, d)
          prepared match {
            case bits: LongBits =>
              // Dense sets (runtime join keys, long IN lists): one bit test per row.
              var i = 0
              while (i < b.n) { acc(i) &= bits.contains(vs(i)) != negated; i += 1 }
            case other =>
              val set = other.asInstanceOf[Array[Long]]
              var i = 0
              while (i < b.n) {
                acc(i) &= (java.util.Arrays.binarySearch(set, vs(i)) >= 0) != negated
                i += 1
              }
          }
        case d: FilterDomain.Floating =>
          val set = prepared.asInstanceOf[Array[Double]]
          val vs = b.doublesOf(c, d)
          var i = 0
          while (i < b.n) {
            acc(i) &= (java.util.Arrays.binarySearch(set, normalize(vs(i))) >= 0) != negated; i += 1
          }
        case FilterDomain.Utf8Bytes =>
          val set = prepared.asInstanceOf[Array[Array[Byte]]]
          andBytes(b.arrays(c), acc, b.n)((v, out, m) => andInBytes(v, set, negated, out, m))
      }
      andNotNull(b.arrays(c), acc)
    case like @ StringMatch(c, MatchKind.Like, _, negated) =>
      val parts = like.likeParts
      andBytes(b.arrays(c), acc, b.n)((v, out, m) => andLikeBytes(v, parts, negated, out, m))
      andNotNull(b.arrays(c), acc)
    case StringMatch(c, kind, p, negated) =>
      andBytes(b.arrays(c), acc, b.n)((v, out, m) => andMatchBytes(v, kind, p, negated, out, m))
      andNotNull(b.arrays(c), acc)
  }

  private def ofKind(d: FilterDomain, v: FilterValue): Boolean = (d, v) match {
    case (_: FilterDomain.Integral | FilterDomain.Decimal128, _: LongValue) => true
    case (_: FilterDomain.Floating, _: DoubleValue) => true
    case (FilterDomain.Utf8Bytes, _: BytesValue) => true
    case _ => false
  }

  private def bad(c: String, v: FilterValue): Nothing =
    throw new IllegalArgumentException(
      s"filter literal $v does not fit column '$c' (${domains(c)})"
    )
}

object RowFilterEvaluator {
  private val I16: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Short]], ByteOrder.LITTLE_ENDIAN)
  private val I32: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Int]], ByteOrder.LITTLE_ENDIAN)
  private val I64: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Long]], ByteOrder.LITTLE_ENDIAN)

  private def anyTrue(x: Array[Boolean]): Boolean = {
    var i = 0; while (i < x.length) { if (x(i)) return true; i += 1 }; false
  }

  /** [[acceptMask]] of `=` and of `<>`. */
  private val EqMask = 2
  private val NotEqMask = 5

  /** Which of compare results -1, 0, 1 (bits 0, 1, 2) make `op` TRUE. */
  private def acceptMask(op: CompareOp): Int = op match {
    case CompareOp.Eq => EqMask
    case CompareOp.NotEq => NotEqMask
    case CompareOp.Lt => 1
    case CompareOp.LtEq => 3
    case CompareOp.Gt => 4
    case CompareOp.GtEq => 6
  }

  /** Null rows are never TRUE for a value test. */
  private def andNotNull(a: ColumnArray, acc: Array[Boolean]): Unit = {
    val nl = a.nulls
    if (nl != null) { var i = 0; while (i < acc.length) { acc(i) &= !nl(i); i += 1 } }
  }

  private def widenLongs(a: ColumnArray, d: FilterDomain.Integral, out: Array[Long]): Array[Long] =
    a match {
      case f: FixedWidthArray =>
        if (f.byteWidth != d.byteWidth)
          throw new IllegalStateException(
            s"decoded width ${f.byteWidth} where the filter expected ${d.byteWidth}"
          )
        val x = f.data
        val n = f.length
        var i = 0
        (d.byteWidth, d.signed) match {
          case (1, true) => while (i < n) { out(i) = x(i).toLong; i += 1 }
          case (1, false) => while (i < n) { out(i) = (x(i) & 0xffL); i += 1 }
          case (2, true) => while (i < n) { out(i) = (I16.get(x, i * 2): Short).toLong; i += 1 }
          case (2, false) => while (i < n) { out(i) = (I16.get(x, i * 2): Short) & 0xffffL; i += 1 }
          case (4, true) => while (i < n) { out(i) = (I32.get(x, i * 4): Int).toLong; i += 1 }
          case (4, false) =>
            while (i < n) { out(i) = (I32.get(x, i * 4): Int) & 0xffffffffL; i += 1 }
          case _ => ByteBuffer.wrap(x, 0, n * 8).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(
              out,
              0,
              n
            )
        }
        out
      case other => throw new IllegalStateException(
          s"an integer filter column decoded as ${other.getClass.getSimpleName}"
        )
    }

  /**
   * 128-bit little-endian decimals as longs, saturated to Long.MinValue / Long.MaxValue beyond
   * (order against a literal strictly inside is kept).
   */
  private def saturateDecimals(a: ColumnArray, out: Array[Long]): Array[Long] = a match {
    case f: FixedWidthArray if f.byteWidth == 16 =>
      val x = f.data
      var i = 0
      while (i < f.length) {
        val lo = I64.get(x, i * 16): Long
        val hi = I64.get(x, i * 16 + 8): Long
        out(i) = if (hi == (lo >> 63)) lo else if (hi < 0) Long.MinValue else Long.MaxValue
        i += 1
      }
      out
    case other => throw new IllegalStateException(
        s"a decimal filter column decoded as ${other.getClass.getSimpleName}"
      )
  }

  private def widenDoubles(
      a: ColumnArray,
      d: FilterDomain.Floating,
      out: Array[Double]
  ): Array[Double] = a match {
    case f: FixedWidthArray =>
      if (f.byteWidth != d.byteWidth)
        throw new IllegalStateException(
          s"decoded width ${f.byteWidth} where the filter expected ${d.byteWidth}"
        )
      val x = f.data
      var i = 0
      if (d.byteWidth == 4) while (i < f.length) {
        out(i) = java.lang.Float.intBitsToFloat(I32.get(x, i * 4): Int).toDouble; i += 1
      }
      else ByteBuffer.wrap(x, 0, f.length * 8).order(ByteOrder.LITTLE_ENDIAN).asDoubleBuffer().get(
        out,
        0,
        f.length
      )
      out
    case other => throw new IllegalStateException(
        s"a floating-point filter column decoded as ${other.getClass.getSimpleName}"
      )
  }

  /** One branch-free loop per operator: the common filter on an integer, date or timestamp column. */
  private def andCompareLongs(
      vs: Array[Long],
      lit: Long,
      op: CompareOp,
      acc: Array[Boolean],
      n: Int
  ): Unit = {
    var i = 0
    op match {
      case CompareOp.Eq => while (i < n) { acc(i) &= vs(i) == lit; i += 1 }
      case CompareOp.NotEq => while (i < n) { acc(i) &= vs(i) != lit; i += 1 }
      case CompareOp.Lt => while (i < n) { acc(i) &= vs(i) < lit; i += 1 }
      case CompareOp.LtEq => while (i < n) { acc(i) &= vs(i) <= lit; i += 1 }
      case CompareOp.Gt => while (i < n) { acc(i) &= vs(i) > lit; i += 1 }
      case CompareOp.GtEq => while (i < n) { acc(i) &= vs(i) >= lit; i += 1 }
    }
  }

  /**
   * Java's operators already give Spark's answer for a non-NaN literal except that a NaN value
   * is greater than it (`v != v` tests for NaN); -0.0 == 0.0 holds in both. A NaN literal
   * takes the general comparison.
   */
  private def andCompareDoubles(
      vs: Array[Double],
      lit: Double,
      op: CompareOp,
      acc: Array[Boolean],
      n: Int
  ): Unit = {
    var i = 0
    if (java.lang.Double.isNaN(lit)) {
      val mask = acceptMask(op)
      while (i < n) { acc(i) &= ((mask >> (compareDouble(vs(i), lit) + 1)) & 1) != 0; i += 1 }
    } else op match {
      case CompareOp.Eq => while (i < n) { acc(i) &= vs(i) == lit; i += 1 }
      case CompareOp.NotEq => while (i < n) { acc(i) &= !(vs(i) == lit); i += 1 }
      case CompareOp.Lt => while (i < n) { acc(i) &= vs(i) < lit; i += 1 }
      case CompareOp.LtEq => while (i < n) { acc(i) &= vs(i) <= lit; i += 1 }
      case CompareOp.Gt => while (i < n) { val v = vs(i); acc(i) &= v > lit | v != v; i += 1 }
      case CompareOp.GtEq => while (i < n) { val v = vs(i); acc(i) &= v >= lit | v != v; i += 1 }
    }
  }

  /** Spark's double order: NaN is the largest value and equals itself; -0.0 equals 0.0. */
  private[table] def compareDouble(a: Double, b: Double): Int =
    if (a < b) -1
    else if (a > b) 1
    else if (a == b) 0
    else {
      val an = java.lang.Double.isNaN(a); val bn = java.lang.Double.isNaN(b);
      if (an && bn) 0 else if (an) 1 else -1
    }

  private def normalize(d: Double): Double = if (d == 0.0) 0.0 else d

  /**
   * The values of an IN leaf ready for lookups, by their kind: longs sorted (a [[LongBits]]
   * bitmap when dense), doubles normalized and sorted, strings sorted as unsigned bytes; null
   * for no values or values of mixed kinds (the evaluator then decides by the column).
   */
  private[table] def prepareIn(values: Seq[FilterValue]): AnyRef = {
    if (values.isEmpty) null
    else values.head match {
      case _: LongValue if values.forall(_.isInstanceOf[LongValue]) =>
        val a = new Array[Long](values.length)
        var i = 0
        values.foreach { v => a(i) = v.asInstanceOf[LongValue].v; i += 1 }
        java.util.Arrays.sort(a)
        LongBits.orSorted(a)
      case _: DoubleValue if values.forall(_.isInstanceOf[DoubleValue]) =>
        val a = values.map(v => normalize(v.asInstanceOf[DoubleValue].v)).toArray
        java.util.Arrays.sort(a)
        a
      case _: BytesValue if values.forall(_.isInstanceOf[BytesValue]) =>
        values.map(_.asInstanceOf[BytesValue].v)
          .sortWith((x: Array[Byte], y: Array[Byte]) => compareUnsigned(x, 0, x.length, y) < 0)
          .toArray
      case _ => null
    }
  }

  /** Values up to this many bytes are compared byte by byte, longer ones by the library. */
  private val ShortBytes = 16

  /**
   * Unsigned lexicographic order of `a[from, from+len)` against all of `b`: Spark's binary
   * string order. Byte by byte when the shorter side is short (no library call per row).
   */
  private[table] def compareUnsigned(a: Array[Byte], from: Int, len: Int, b: Array[Byte]): Int = {
    val m = math.min(len, b.length)
    if (m > ShortBytes) {
      Integer.signum(java.util.Arrays.compareUnsigned(a, from, from + len, b, 0, b.length))
    } else {
      var k = 0
      while (k < m && a(from + k) == b(k)) k += 1
      if (k < m) { if ((a(from + k) & 0xff) < (b(k) & 0xff)) -1 else 1 }
      else Integer.signum(len - b.length)
    }
  }

  /**
   * Runs the string test `test(values, out, count)`, which ANDs its verdict for each value into
   * `out`, over column `a`: straight on plain bytes; on a dictionary column once per entry, then
   * per row by id, when the dictionary is no larger than the batch (else on its bytes).
   */
  private def andBytes(
      a: ColumnArray,
      acc: Array[Boolean],
      n: Int
  )(test: (VarBinaryArray, Array[Boolean], Int) => Unit): Unit =
    a match {
      case v: VarBinaryArray => test(v, acc, n)
      case d: DictionaryArray if d.dictionary.size <= n =>
        val m = d.dictionary.size
        val hit = new Array[Boolean](m)
        java.util.Arrays.fill(hit, true)
        test(d.dictionary.values, hit, m)
        val ids = d.indices
        var i = 0
        while (i < n) { acc(i) &= hit(ids(i)); i += 1 }
      case d: DictionaryArray => test(ColumnArrays.materialize(d), acc, n)
      case other => throw new IllegalStateException(
          s"a string filter column decoded as ${other.getClass.getSimpleName}"
        )
    }

  /**
   * `=` and `<>` test lengths first and then bytes (short values, such as flags and codes,
   * byte by byte: no library call per row); the other comparisons order the bytes.
   */
  private def andCompareBytes(
      a: VarBinaryArray,
      lit: Array[Byte],
      mask: Int,
      out: Array[Boolean],
      n: Int
  ): Unit = {
    val off = a.offsets; val d = a.data
    var i = 0
    if (mask == EqMask || mask == NotEqMask) {
      val want = mask == EqMask
      while (i < n) {
        out(i) &= equalBytes(d, off(i), off(i + 1) - off(i), lit) == want
        i += 1
      }
    } else {
      while (i < n) {
        out(i) &= ((mask >> (compareUnsigned(d, off(i), off(i + 1) - off(i), lit) + 1)) & 1) != 0
        i += 1
      }
    }
  }

  /** Whether `a[from, from+len)` is all of `b`. */
  private def equalBytes(a: Array[Byte], from: Int, len: Int, b: Array[Byte]): Boolean =
    len == b.length && (
      if (len > ShortBytes) java.util.Arrays.equals(a, from, from + len, b, 0, len)
      else {
        var k = 0
        while (k < len && a(from + k) == b(k)) k += 1
        k == len
      }
    )

  private def andInBytes(
      a: VarBinaryArray,
      sorted: Array[Array[Byte]],
      negated: Boolean,
      out: Array[Boolean],
      n: Int
  ): Unit = {
    val off = a.offsets; val d = a.data
    var i = 0
    while (i < n) {
      val s = off(i); val len = off(i + 1) - s
      var lo = 0; var hi = sorted.length - 1; var found = false
      while (!found && lo <= hi) {
        val mid = (lo + hi) >>> 1
        val c = compareUnsigned(d, s, len, sorted(mid))
        if (c == 0) found = true else if (c > 0) lo = mid + 1 else hi = mid - 1
      }
      out(i) &= found != negated
      i += 1
    }
  }

  private def andMatchBytes(
      a: VarBinaryArray,
      kind: MatchKind,
      p: Array[Byte],
      negated: Boolean,
      out: Array[Boolean],
      n: Int
  ): Unit = {
    val off = a.offsets; val d = a.data
    var i = 0
    while (i < n) {
      val s = off(i); val len = off(i + 1) - s
      val hit = len >= p.length && (kind match {
        case MatchKind.StartsWith => java.util.Arrays.equals(d, s, s + p.length, p, 0, p.length)
        case MatchKind.EndsWith =>
          java.util.Arrays.equals(d, s + len - p.length, s + len, p, 0, p.length)
        case MatchKind.Contains => indexOf(d, s, len, p) >= 0
        case MatchKind.Like => throw new IllegalStateException("LIKE is matched by its parts")
      })
      out(i) &= hit != negated
      i += 1
    }
  }

  /**
   * `LIKE` with `%` only: `parts` (at least one) are the runs between the `%`s. The first must
   * start the value and the last end it; those between are found leftmost, in order, in what
   * is left (leftmost matches leave the most room for the rest, so this is exact).
   */
  private def andLikeBytes(
      a: VarBinaryArray,
      parts: Array[Array[Byte]],
      negated: Boolean,
      out: Array[Boolean],
      n: Int
  ): Unit = {
    val off = a.offsets; val d = a.data
    val first = parts(0); val last = parts(parts.length - 1)
    var least = 0
    parts.foreach(least += _.length)
    var i = 0
    while (i < n) {
      val s = off(i); val len = off(i + 1) - s
      var hit = len >= least &&
        java.util.Arrays.equals(d, s, s + first.length, first, 0, first.length) &&
        java.util.Arrays.equals(d, s + len - last.length, s + len, last, 0, last.length)
      if (parts.length == 1) hit &&= len == first.length
      var pos = s + first.length
      val end = s + len - last.length
      var j = 1
      while (hit && j < parts.length - 1) {
        val at = indexOf(d, pos, end - pos, parts(j))
        if (at < 0) hit = false else pos += at + parts(j).length
        j += 1
      }
      out(i) &= hit != negated
      i += 1
    }
  }

  private def indexOf(d: Array[Byte], s: Int, len: Int, p: Array[Byte]): Int = {
    if (p.length == 0) return 0
    var i = 0
    while (i + p.length <= len) {
      if (d(s + i) == p(0) && java.util.Arrays.equals(d, s + i, s + i + p.length, p, 0, p.length))
        return i
      i += 1
    }
    -1
  }
}
