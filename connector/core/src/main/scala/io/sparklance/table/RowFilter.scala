package io.sparklance.table

/**
 * A row predicate the reader evaluates itself, on decoded columns, before the other
 * projected columns are decoded. It is the subset of SQL predicates whose result the reader
 * can compute exactly: comparisons of a top-level primitive column (or of its remainder by a
 * constant) with literals, null tests, string prefix/suffix/containment, combined with AND, OR and NOT. Literals are
 * already in the column's value domain (see [[FilterValue]]).
 *
 * A row is kept when the predicate is TRUE; FALSE and UNKNOWN (SQL null) both drop it.
 * `NOT` is pushed down to the leaves when the tree is built ([[RowFilter.not]]), so the
 * evaluator only ever needs "is this TRUE": under three-valued logic, after that rewrite,
 * TRUE(a AND b) = TRUE(a) and TRUE(b), and likewise for OR.
 */
sealed trait RowFilter {

  /** Top-level column names this predicate reads. */
  def columns: Set[String]
}

object RowFilter {

  /** TRUE for every row, or for none. */
  final case class Const(value: Boolean) extends RowFilter { def columns: Set[String] = Set.empty }

  final case class And(left: RowFilter, right: RowFilter) extends RowFilter {
    def columns: Set[String] = left.columns ++ right.columns
  }

  final case class Or(left: RowFilter, right: RowFilter) extends RowFilter {
    def columns: Set[String] = left.columns ++ right.columns
  }

  /** `column IS NULL`, or `IS NOT NULL` when `negated`. */
  final case class IsNull(column: String, negated: Boolean) extends RowFilter {
    def columns: Set[String] = Set(column)
  }

  /**
   * `column <op> value`. Null values are never TRUE. A negated comparison is expressed by
   * its complement operator, which is exact because every value domain here is totally
   * ordered (doubles order NaN above everything, as Spark does).
   */
  final case class Compare(column: String, op: CompareOp, value: FilterValue) extends RowFilter {
    def columns: Set[String] = Set(column)
  }

  /**
   * `column % divisor <op> value` on an integer column, with Java's (and Spark's) remainder:
   * the sign follows the dividend. `divisor` is never 0 (Spark raises an error or yields null
   * there, so such predicates stay with Spark).
   */
  final case class Remainder(column: String, divisor: Long, op: CompareOp, value: Long)
      extends RowFilter {
    def columns: Set[String] = Set(column)
  }

  /** `column IN (values)`, or `NOT IN` when `negated`; no value is null. */
  final case class In(column: String, values: Seq[FilterValue], negated: Boolean)
      extends RowFilter {
    def columns: Set[String] = Set(column)

    /**
     * The values sorted for lookups ([[RowFilterEvaluator.prepareIn]]), once per copy of this
     * node: the tasks of an executor share a broadcast filter, so a set of a million join keys
     * is sorted once there, not once per task.
     */
    @transient private[table] lazy val prepared: AnyRef = RowFilterEvaluator.prepareIn(values)

    /**
     * Computed once and compared first: runtime filters are told apart by their translation
     * (plans hash and compare scans), and one can hold a million join keys.
     */
    @transient override lazy val hashCode: Int = scala.util.hashing.MurmurHash3.productHash(this)

    override def equals(o: Any): Boolean = o match {
      case that: In => (this eq that) || (hashCode == that.hashCode && column == that.column &&
          negated == that.negated && values == that.values)
      case _ => false
    }

    /** Serialized as an [[InForm]]: a runtime filter can hold a million join keys. */
    private def writeReplace(): AnyRef = InForm(column, negated, values)
  }

  /**
   * The serialized form of [[In]]: integer values (all of them) as one array of longs, other
   * values as they are. Java serialization of a million value objects takes a large part of
   * a second; the array takes milliseconds.
   */
  private final case class InForm(
      column: String,
      negated: Boolean,
      longs: Array[Long],
      values: Seq[FilterValue]
  ) {
    private def readResolve(): AnyRef =
      if (longs == null) In(column, values, negated)
      else In(column, longs.toSeq.map(FilterValue.LongValue(_)), negated)
  }

  private object InForm {
    def apply(column: String, negated: Boolean, values: Seq[FilterValue]): InForm =
      if (values.forall(_.isInstanceOf[FilterValue.LongValue]))
        InForm(column, negated, values.map(_.asInstanceOf[FilterValue.LongValue].v).toArray, null)
      else InForm(column, negated, null, values)
  }

  /**
   * String prefix, suffix or containment tests on UTF-8 bytes, or a LIKE pattern whose only
   * wildcard is `%` ([[MatchKind.Like]]); `negated` for NOT.
   */
  final case class StringMatch(
      column: String,
      kind: MatchKind,
      pattern: Array[Byte],
      negated: Boolean
  ) extends RowFilter {
    def columns: Set[String] = Set(column)

    /** A LIKE pattern's literal runs, split once rather than for every batch. */
    @transient private[table] lazy val likeParts: Array[Array[Byte]] =
      MatchKind.Like.parts(pattern)
  }

  /** Logical negation, pushed to the leaves so no NOT node remains in the tree. */
  def not(f: RowFilter): RowFilter = f match {
    case Const(v) => Const(!v)
    case And(l, r) => Or(not(l), not(r))
    case Or(l, r) => And(not(l), not(r))
    case IsNull(c, n) => IsNull(c, !n)
    case Compare(c, op, v) => Compare(c, op.complement, v)
    case Remainder(c, d, op, v) => Remainder(c, d, op.complement, v)
    case In(c, vs, n) => In(c, vs, !n)
    case StringMatch(c, k, p, n) => StringMatch(c, k, p, !n)
  }

  /** Conjunction of all, TRUE when empty. */
  def all(fs: Seq[RowFilter]): RowFilter = fs.reduceOption(And(_, _)).getOrElse(Const(true))
}

sealed abstract class CompareOp(val symbol: String) extends Serializable {
  def complement: CompareOp
}

object CompareOp {
  case object Eq extends CompareOp("=") { def complement: CompareOp = NotEq }
  case object NotEq extends CompareOp("<>") { def complement: CompareOp = Eq }
  case object Lt extends CompareOp("<") { def complement: CompareOp = GtEq }
  case object LtEq extends CompareOp("<=") { def complement: CompareOp = Gt }
  case object Gt extends CompareOp(">") { def complement: CompareOp = LtEq }
  case object GtEq extends CompareOp(">=") { def complement: CompareOp = Lt }
}

sealed trait MatchKind
object MatchKind {
  case object StartsWith extends MatchKind
  case object EndsWith extends MatchKind
  case object Contains extends MatchKind

  /**
   * SQL `LIKE` with `%` as its only wildcard (any run of characters, none too) and no escape:
   * the pattern's bytes hold the `%`s, so `'%a%b'` holds values containing `a` and then
   * ending with `b` (not overlapping). Byte matching is exact on UTF-8, where no byte of a
   * multi-byte character is `%`, and a `%` matches newlines too, as in Spark.
   */
  case object Like extends MatchKind {

    /** The literal runs between the `%`s: the first anchored at the start, the last at the end. */
    def parts(pattern: Array[Byte]): Array[Array[Byte]] = {
      val out = Array.newBuilder[Array[Byte]]
      var from = 0
      var i = 0
      while (i <= pattern.length) {
        if (i == pattern.length || pattern(i) == '%') {
          out += java.util.Arrays.copyOfRange(pattern, from, i)
          from = i + 1
        }
        i += 1
      }
      out.result()
    }
  }
}

/**
 * A literal in the value domain the evaluator compares in: integers, dates and microsecond
 * timestamps as longs (unsigned columns widened, as the Spark schema shows them); floats
 * and doubles as doubles; strings as UTF-8 bytes, compared unsigned byte by byte; booleans
 * as 0/1 longs.
 */
sealed trait FilterValue
object FilterValue {
  final case class LongValue(v: Long) extends FilterValue
  final case class DoubleValue(v: Double) extends FilterValue
  final case class BytesValue(v: Array[Byte]) extends FilterValue {
    override def toString: String =
      "'" + new String(v, java.nio.charset.StandardCharsets.UTF_8) + "'"
  }
}
