package io.sparklance.table.namespace

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.txn.{CommitOptions, WritePlan}
import io.sparklance.testutil.{Pylance, TempDirs, TinyDatasets}

/**
 * Our directory namespace against pylance's `DirectoryNamespace` on the same root: what
 * either side creates, the other lists, describes (same locations) and opens.
 */
class DirectoryNamespaceSuite extends AnyFunSuite {
  private val fileIO = HadoopFileIO.local()

  private def view(root: String): JsonNode = Pylance.call("namespace_ops", "view", root)

  /** Our view in pylance's shape. */
  private def ours(root: String): Map[String, String] = {
    val ns = new DirectoryNamespace(fileIO, root)
    def walk(parent: Seq[String]): Seq[(String, String)] =
      ns.listTables(parent).map(t =>
        (parent :+ t).mkString("$") ->
          ns.tableLocation(parent :+ t).get
      ) ++
        ns.listNamespaces(parent).flatMap(c =>
          ((parent :+ c).mkString("$") -> "namespace") +:
            walk(parent :+ c)
        )
    walk(Nil).toMap
  }

  private def theirs(root: String): Map[String, String] =
    view(root).fields().asScala.map { e =>
      e.getKey -> (if (e.getValue.isTextual) e.getValue.asText
                   else e.getValue.get("location").asText)
    }.toMap

  private def createDataset(location: String): Unit =
    WritePlan.replace(location, None, TinyDatasets.fields, None, mustCreate = true)
      .commit(fileIO, Seq(TinyDatasets.fragment(location, 0L until 4L)), CommitOptions())

  test("namespaces and tables pylance created are listed and located as pylance does") {
    Pylance.require()
    val root = TempDirs.create("lance-ns-").toString
    Pylance.call("namespace_ops", "create_namespace", root, Seq("db"))
    Pylance.call("namespace_ops", "create_namespace", root, Seq("db", "inner"))
    Pylance.call("namespace_ops", "create_table", root, Seq("db", "t1"), 0)
    Pylance.call("namespace_ops", "create_table", root, Seq("t0"), 10)
    Pylance.call("namespace_ops", "create_table", root, Seq("db", "inner", "deep"), 20)
    assert(ours(root) == theirs(root))
  }

  test("namespaces and tables we create are listed, located and opened by pylance") {
    Pylance.require()
    val root = TempDirs.create("lance-ns-").toString
    val ns = new DirectoryNamespace(fileIO, root)
    ns.createNamespace(Seq("sales"))
    createDataset(ns.addTable(Seq("sales", "orders")))
    createDataset(ns.addTable(Seq("top")))
    // pylance keeps working on the same namespace, and we see its changes.
    Pylance.call("namespace_ops", "create_table", root, Seq("sales", "returns"), 5)
    val seen = view(root)
    assert(seen.get("sales$orders").get("rows").asInt == 4)
    assert(seen.get("top").get("rows").asInt == 4)
    assert(ours(root) == theirs(root))
    assert(ns.removeTable(Seq("sales", "orders")))
    assert(ours(root) == theirs(root) && !theirs(root).contains("sales$orders"))
    intercept[io.sparklance.LanceException](ns.dropNamespace(Seq("sales")))
    Pylance.call("namespace_ops", "drop_table", root, Seq("sales", "returns"))
    ns.dropNamespace(Seq("sales"))
    assert(ours(root) == theirs(root) && !theirs(root).contains("sales"))
  }

  test("changes from both sides interleave without losing entries") {
    Pylance.require()
    val root = TempDirs.create("lance-ns-").toString
    Pylance.call("namespace_ops", "create_namespace", root, Seq("a"))
    val ns = new DirectoryNamespace(fileIO, root)
    val read = ns.entries()
    Pylance.call("namespace_ops", "create_namespace", root, Seq("b"))
    assert(read.map(_.objectId) == Seq("a"))
    ns.createNamespace(Seq("c"))
    assert(theirs(root).keySet == Set("a", "b", "c"))
    val rows = Pylance.call("namespace_ops", "manifest_rows", root)
    assert(rows.elements().asScala.map(_.get("object_id").asText).toSeq == Seq("a", "b", "c"))
  }

  test("root tables found only by listing <root>/<name>.lance are tables too") {
    Pylance.require()
    val root = TempDirs.create("lance-ns-").toString
    createDataset(root + "/legacy.lance")
    val ns = new DirectoryNamespace(fileIO, root)
    assert(ns.listTables(Nil) == Seq("legacy"))
    assert(ours(root) == theirs(root))
  }
}
