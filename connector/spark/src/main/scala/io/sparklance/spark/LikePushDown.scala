package io.sparklance.spark

import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  Expression,
  Like,
  Literal,
  Not,
  PredicateHelper
}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LogicalPlan}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.StringType
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.apache.spark.unsafe.types.UTF8String

/**
 * Hands the reader `LIKE` / `NOT LIKE` patterns Spark cannot push itself: those with more
 * than one run of text between `%`s (TPC-H q13's `o_comment NOT LIKE '%special%requests%'`),
 * which Spark's optimizer leaves as a regular expression evaluated on every row (simpler
 * patterns it rewrites into prefix, suffix and containment tests, which are pushed), and
 * which its V2 predicates cannot express.
 *
 * A conjunct `col [NOT] LIKE 'pattern'` of a filter right above a Lance relation, on a string
 * column the reader evaluates, with `%` as the pattern's only wildcard (no `_`, no escape
 * character), moves from the filter into a scan option the scan builder reads; the reader
 * then keeps exactly the rows for which it is TRUE ([[io.sparklance.table.MatchKind.Like]]),
 * matching UTF-8 bytes. Runs before scan push-down; not with `filter_pushdown=false`.
 */
object LikePushDown extends Rule[LogicalPlan] with PredicateHelper {

  /** The scan option carrying the patterns (internal: not a user option). */
  val Key = "__spark_lance_like"

  /** One pattern handed to the scan. */
  final case class Pushed(column: String, pattern: String, negated: Boolean) {

    /** As the scan's description shows it. */
    def sql: String = LanceScan.column(column).describe() + (if (negated) " NOT" else "") +
      " LIKE '" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"
  }

  /** The patterns a relation's scan options carry. */
  def of(options: CaseInsensitiveStringMap): Seq[Pushed] =
    Option(options.get(Key)).fold(Seq.empty[Pushed])(decode)

  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case f @ Filter(_, r: DataSourceV2Relation) => r.table match {
        case t: LanceTable if t.options.filterPushdown => pushInto(f, r, t)
        case _ => f
      }
  }

  /**
   * `f` without the conjuncts that move into `r`'s scan option; with them still, when
   * [[KeepFiltersForPruning]] marked `r` (Spark then re-checks what the scan evaluates, so its
   * dynamic pruning sees this side as selective), each added to the option once.
   */
  private def pushInto(f: Filter, r: DataSourceV2Relation, t: LanceTable): LogicalPlan = {
    val translator = new FilterTranslator(t.snapshot.schema, t.schema())
    val (moved, kept) = splitConjunctivePredicates(f.condition).map(c => c -> pushable(c, r))
      .partition { case (_, p) => p.exists(x => translator.like(x.column, x.pattern).isDefined) }
    val had = of(r.options)
    val added = moved.flatMap(_._2).filterNot(had.contains)
    def withLikes = RelationMarks.withOption(r, Key, encode(had ++ added))
    if (KeepFiltersForPruning.marked(r.options)) {
      if (added.isEmpty) f else f.copy(child = withLikes)
    } else if (moved.isEmpty) f
    else kept.map(_._1).reduceOption(And).fold[LogicalPlan](withLikes)(Filter(_, withLikes))
  }

  /** `c` as a pattern for the scan, when it is `[NOT] attr LIKE 'text'` with `%` only. */
  private def pushable(c: Expression, r: DataSourceV2Relation): Option[Pushed] = {
    def like(e: Expression, negated: Boolean): Option[Pushed] = e match {
      case Like(a: Attribute, Literal(p: UTF8String, StringType), escape)
          if a.dataType == StringType && r.output.exists(_.exprId == a.exprId) =>
        val pattern = p.toString
        if (pattern.indexOf('_') >= 0 || pattern.indexOf(escape) >= 0) None
        else Some(Pushed(a.name, pattern, negated))
      case _ => None
    }
    c match {
      case Not(e) => like(e, negated = true)
      case e => like(e, negated = false)
    }
  }

  /** Length-prefixed fields, so column names and patterns may hold any character. */
  private def encode(ps: Seq[Pushed]): String = ps.map { p =>
    (if (p.negated) "!" else "=") + p.column.length + ":" + p.column +
      p.pattern.length + ":" + p.pattern
  }.mkString

  private def decode(s: String): Seq[Pushed] = {
    val out = Seq.newBuilder[Pushed]
    var i = 0
    def field(): String = {
      val colon = s.indexOf(':', i)
      val n = s.substring(i, colon).toInt
      i = colon + 1 + n
      s.substring(colon + 1, i)
    }
    while (i < s.length) {
      val negated = s.charAt(i) == '!'
      i += 1
      val column = field()
      out += Pushed(column, field(), negated)
    }
    out.result()
  }
}
