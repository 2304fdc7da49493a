package io.sparklance.spark.vector

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{
  Expression,
  ExpressionInfo,
  NamedArgumentExpression
}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.util.ArrayData
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types._

import io.sparklance.LanceErrors
import io.sparklance.spark.{LanceCatalog, LanceReadOptions, LanceTable}

/**
 * The SQL form of a single nearest-neighbour search, a table-valued function the session
 * extension registers:
 * {{{
 * SELECT * FROM lance_nearest('/data/items', 'emb', array(0.1, 0.2, ...), 10)
 * SELECT id, _distance FROM lance_nearest(table => 'lance.db.items', column => 'emb',
 *   q => array(...), k => 5, metric => 'cosine', nprobes => 20, refine_factor => 4,
 *   filter => 'price < 10', use_index => true)
 * }}}
 * Arguments by position or by name, as pylance names them (`table` a dataset path or a table
 * name of any catalog; `k` defaults to 10); the rows are [[NearestRows.nearest]]'s. Every
 * argument must be a constant. The search runs when the query is analysed (EXPLAIN included),
 * on the table's version at that moment.
 */
object LanceNearestFunction {
  val Name = "lance_nearest"

  private final case class Param(name: String, dataType: DataType, required: Boolean = false)

  private val Params = Seq(
    Param("table", StringType, required = true),
    Param("column", StringType, required = true),
    Param("q", ArrayType(FloatType, containsNull = true), required = true),
    Param("k", IntegerType),
    Param("metric", StringType),
    Param("nprobes", IntegerType),
    Param("refine_factor", IntegerType),
    Param("filter", StringType),
    Param("use_index", BooleanType)
  )

  private val Usage = s"$Name(table, column, q[, k[, metric[, nprobes[, refine_factor" +
    "[, filter[, use_index]]]]]]) - The k (default 10) rows of the Lance table (a path or a " +
    "table name) whose vectors in column are nearest the query vector q, nearest first, " +
    "with their _distance: pylance's to_table(nearest=...) with prefilter=True."

  /** What `SparkSessionExtensions.injectTableFunction` takes. */
  @scala.annotation.nowarn("cat=deprecation") // the constructor taking no examples or group
  def description: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => LogicalPlan) =
    (
      FunctionIdentifier(Name),
      new ExpressionInfo(getClass.getName.stripSuffix("$"), null, Name, Usage, ""),
      build
    )

  /** The plan of the rows found for the call's arguments `args`. */
  def build(args: Seq[Expression]): LogicalPlan = {
    val values = bind(args)
    def get[T](name: String): Option[T] =
      values.get(name).flatMap(Option(_)).map(_.asInstanceOf[T])
    val spark = SparkSession.active
    val (path, options) = target(spark, get[String]("table").get)
    val k = get[Int]("k").getOrElse(10)
    val rows = NearestRows.nearest(
      spark,
      path,
      options.asJava,
      get[String]("column").get,
      get[Array[Float]]("q").get,
      k,
      get[String]("metric").orNull,
      get[Int]("nprobes").map(Int.box).orNull,
      get[Int]("refine_factor").map(Int.box).orNull,
      get[Boolean]("use_index").getOrElse(true),
      get[String]("filter").orNull,
      null
    )
    rows.queryExecution.analyzed
  }

  /** The arguments by parameter name, evaluated: positional ones first, then named ones. */
  private def bind(args: Seq[Expression]): Map[String, Any] = {
    val (positional, named) = args.span(!_.isInstanceOf[NamedArgumentExpression])
    if (positional.size > Params.size) throw LanceErrors.invalidOption(
      Name,
      s"${args.size} arguments",
      s"takes at most ${Params.size}: ${Params.map(_.name)
          .mkString(", ")}"
    )
    val byName = positional.zip(Params).map { case (e, p) => p.name -> e } ++ named.map {
      case NamedArgumentExpression(key, e) =>
        val name = key.toLowerCase(java.util.Locale.ROOT)
        if (!Params.exists(_.name == name)) throw LanceErrors.invalidOption(
          key,
          e.sql,
          s"$Name has no such parameter; its parameters: ${Params.map(_.name).mkString(", ")}"
        )
        name -> e
      case e => throw LanceErrors.invalidOption(
          Name,
          e.sql,
          "a positional argument cannot follow a named one"
        )
    }
    byName.groupBy(_._1).collectFirst { case (n, es) if es.size > 1 => n }.foreach { n =>
      throw LanceErrors.invalidOption(n, "given twice", s"$Name takes each argument once")
    }
    val byParam = byName.toMap
    Params.flatMap { p =>
      byParam.get(p.name).map(e => p.name -> evaluate(p, e)).orElse(
        if (p.required)
          throw LanceErrors.invalidOption(p.name, "missing", s"$Name needs it: $Usage")
        else None
      )
    }.toMap
  }

  /**
   * The value of the constant `e` for `p`, as a Scala value (null for NULL). Converted here,
   * not by a Cast, whose constructor differs between the Spark lines this jar runs on.
   */
  private def evaluate(p: Param, e: Expression): Any = {
    if (!e.foldable) throw LanceErrors.invalidOption(p.name, e.sql, "must be a constant")
    def wrong(why: String) = LanceErrors.invalidOption(p.name, e.sql, why)
    val v = e.eval()
    if (v == null) {
      if (p.required) throw wrong(s"$Name needs a value")
      return null
    }
    (p.dataType, e.dataType, v) match {
      case (StringType, StringType, s) => s.toString
      case (BooleanType, BooleanType, b: java.lang.Boolean) => b.booleanValue
      case (IntegerType, _: NumericType, n) =>
        number(n).filter(x => x.isWhole && x.abs <= Int.MaxValue).map(_.toInt)
          .getOrElse(throw wrong("must be a whole number"))
      case (_: ArrayType, ArrayType(item, _), a: ArrayData) =>
        Array.tabulate(a.numElements()) { i =>
          if (a.isNullAt(i)) throw wrong(s"holds a NULL at position $i")
          number(a.get(i, item)).map(_.toFloat).getOrElse(throw wrong("must hold numbers"))
        }
      case _ => throw wrong(s"is ${e.dataType.simpleString}; $Name takes " +
          p.dataType.simpleString)
    }
  }

  private def number(v: Any): Option[Double] = v match {
    case d: Decimal => Some(d.toDouble)
    case n: java.lang.Number => Some(n.doubleValue)
    case _ => None
  }

  /**
   * The dataset path and read options of the `table` argument: a path (absolute, or a URI),
   * or a Lance table of any catalog, read at the version its name resolves to.
   */
  private def target(spark: SparkSession, table: String): (String, Map[String, String]) = {
    val t = table.trim
    if (LanceCatalog.isPathName(t)) return (t, Map.empty)
    spark.table(t).queryExecution.analyzed.collectFirst {
      case r: DataSourceV2Relation if r.table.isInstanceOf[LanceTable] =>
        val lance = r.table.asInstanceOf[LanceTable]
        val opts = r.options.asCaseSensitiveMap().asScala.toMap ++ lance.tableOptions
        (
          lance.snapshot.root,
          opts.filter { case (k, _) =>
            !VectorSearchJob.isVersionKey(k)
          } +
            (LanceReadOptions.Version -> lance.snapshot.version.toString)
        )
    }.getOrElse(throw LanceErrors.invalidOption("table", t, "is not a Lance table"))
  }
}
