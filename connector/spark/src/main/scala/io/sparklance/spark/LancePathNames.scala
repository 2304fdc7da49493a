package io.sparklance.spark

import java.lang.reflect.{InvocationHandler, InvocationTargetException, Method, Proxy}
import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan

/**
 * Path names (``lance.`/data/t.lance` ``, ``lance.`s3://b/t`.versions``) in a session where no
 * catalog is named `lance` but the session extension is on: Spark would try them as a query
 * on a file (which only file formats serve) and fail. The SQL parser the extension wraps
 * ([[wrap]]) renames them into [[Catalog]], a [[LanceCatalog]] it registers on first use, so
 * they read, write, time-travel and DESCRIBE as in a session with the `lance` catalog.
 *
 * Only names whose second part is a path are renamed; a session catalog database named
 * `lance` keeps its tables.
 */
object LancePathNames {

  /** The catalog path names are resolved in when no catalog is named `lance`. */
  val Catalog = "spark_lance_paths"

  private val Kinds = Set(
    "UnresolvedRelation",
    "UnresolvedTable",
    "UnresolvedTableOrView",
    "UnresolvedIdentifier",
    "UnresolvedView"
  )

  /**
   * `delegate` with path names renamed in what it parses. A dynamic proxy, so that it has every
   * method of the running Spark's parser interface (later releases add some).
   */
  def wrap(session: SparkSession, delegate: ParserInterface): ParserInterface = {
    val handler = new InvocationHandler {
      override def invoke(proxy: AnyRef, m: Method, args: Array[AnyRef]): AnyRef = {
        val out =
          try { if (args == null) m.invoke(delegate) else m.invoke(delegate, args: _*) }
          catch { case e: InvocationTargetException => throw e.getCause }
        out match {
          // parsePlan, parseQuery, and what later releases add (4.3: parsePlanWithParameters).
          case plan: LogicalPlan => renamed(session, plan)
          case parts: Seq[_]
              if m.getName == "parseMultipartIdentifier" &&
                isPathName(parts) && !lanceCatalogRegistered(session) => inCatalog(session, parts)
          // A name with a version or time (4.3's parseTemporalTableIdentifier, spark.table).
          case named: Product
              if named.productArity > 0 && m.getName.contains("Identifier") &&
                isPathName(named.productElement(0)) && !lanceCatalogRegistered(session) =>
            val args = inCatalog(session, named.productElement(0).asInstanceOf[Seq[_]]) +:
              named.productIterator.drop(1).map(_.asInstanceOf[AnyRef]).toSeq
            named.getClass.getConstructors.find(_.getParameterCount == named.productArity)
              .fold(out)(_.newInstance(args: _*).asInstanceOf[AnyRef])
          case _ => out
        }
      }
    }
    Proxy.newProxyInstance(
      classOf[ParserInterface].getClassLoader,
      Array[Class[_]](classOf[ParserInterface]),
      handler
    ).asInstanceOf[ParserInterface]
  }

  /**
   * `plan` with its path names renamed into [[Catalog]]: in its nodes, their subqueries, and
   * plans held apart from the children (an INSERT's target).
   */
  def renamed(session: SparkSession, plan: LogicalPlan): LogicalPlan =
    if (lanceCatalogRegistered(session)) plan
    else plan.transformUpWithSubqueries { case n => renamedNode(session, n) }

  private def renamedNode(session: SparkSession, n: LogicalPlan): LogicalPlan = {
    var changed = false
    val args = n.productIterator.map {
      case parts: Seq[_] if Kinds(n.nodeName) && isPathName(parts) =>
        changed = true
        inCatalog(session, parts)
      case p: LogicalPlan if !n.children.exists(_ eq p) =>
        val r = renamed(session, p)
        if (r ne p) changed = true
        r
      case other => other.asInstanceOf[AnyRef]
    }.toArray
    if (changed) n.makeCopy(args) else n
  }

  /**
   * Whether `value` is a name ``lance.`/path` `` (optionally a metadata table after it); the
   * callers check once that no catalog is named `lance`, which would own such names.
   */
  private def isPathName(value: Any): Boolean = value match {
    case parts: Seq[_] if parts.size == 2 || parts.size == 3 =>
      (parts.head, parts(1)) match {
        case (h: String, p: String) => h.toLowerCase(Locale.ROOT) == "lance" &&
          LanceCatalog.isPathName(p)
        case _ => false
      }
    case _ => false
  }

  /** `parts` with [[Catalog]] for `lance`, registering it first if it is not. */
  private def inCatalog(session: SparkSession, parts: Seq[_]): Seq[String] = {
    val key = s"spark.sql.catalog.$Catalog"
    if (session.conf.getOption(key).isEmpty) session.conf.set(key, classOf[LanceCatalog].getName)
    (Catalog +: parts.tail.map(_.toString)).toList
  }

  private def lanceCatalogRegistered(session: SparkSession): Boolean =
    session.conf.getOption("spark.sql.catalog.lance").isDefined
}
