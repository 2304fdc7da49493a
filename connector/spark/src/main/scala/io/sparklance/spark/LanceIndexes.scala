package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.analysis.{IndexAlreadyExistsException, NoSuchIndexException}
import org.apache.spark.sql.connector.catalog.index.TableIndex
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference}
import org.apache.spark.sql.functions.col

import io.sparklance.{LanceErrors, LanceNotFoundException}
import io.sparklance.format.LanceField
import io.sparklance.spark.write.ColBuilder
import io.sparklance.table.{LanceDataset, VersionSpec}
import io.sparklance.table.index.ScalarIndexes

/**
 * `CREATE INDEX name ON t [USING btree] (column)`, `DROP INDEX name ON t` and the index list
 * of a Lance table (Spark's SupportsIndex), as pylance's `create_scalar_index(column, "BTREE",
 * name)`, `drop_index(name)` and `list_indices()`. Spark sorts the column's live rows by value
 * (nulls first, then by row address) across the cluster; the driver streams the sorted rows, a
 * partition at a time, into the index files (see ScalarIndexes).
 */
private[spark] object LanceIndexes {

  /** Rows the driver hands to the index writer at once. */
  private val Batch = 65536

  def create(
      table: LanceTable,
      name: String,
      columns: Array[NamedReference],
      properties: util.Map[String, String],
      readOptions: Map[String, String]
  ): Unit = {
    val root = table.snapshot.root
    val kind = Option(properties.get("type")).filter(_.nonEmpty).getOrElse("btree")
    if (!kind.equalsIgnoreCase("btree"))
      throw LanceErrors.unsupported(s"Cannot create index $name on $root: index type '$kind' " +
        "is not supported (USING btree is)")
    if (columns.length != 1)
      throw LanceErrors.unsupported(s"Cannot create index $name on $root: a BTREE index has " +
        s"one column, not ${columns.length}")
    val column = columns(0).fieldNames().mkString(".")
    val read = LanceDataset.open(table.io, root).open(VersionSpec.Latest)
    val field = ScalarIndexes.indexableField(read, column)
    // OPTIONS ('replace' = 'true'): an index of the same name is replaced in the same commit,
    // as pylance's create_scalar_index(replace=True).
    val replace = Option(properties.get("replace")).exists(_.trim.equalsIgnoreCase("true"))
    if (!replace && ScalarIndexes.list(table.io, read).exists(_.getName == name))
      throw new IndexAlreadyExistsException(name, table.name(), None)
    // Row addresses, also with stable row ids: what pylance 14 indexes.
    val id = LanceMetadataColumns.RowAddr.name
    val spark = SparkSession.active
    val sorted = spark.read.format("lance").options(readOptions)
      .option(LanceReadOptions.Version, read.version.toString).load(root)
      .select(
        col(columns(0).fieldNames().map(p => s"`$p`").mkString(".")).as("v"),
        col(id).as("id")
      )
      .orderBy(col("v").asc_nulls_first, col("id").asc)
    val dataType = sorted.schema("v").dataType
    val valueField = LanceField(0, -1, "values", field.logicalType, nullable = true, Map.empty, Nil)
    ScalarIndexes.createBTree(table.io, read, column, Some(name), replace) { writer =>
      val values = ColBuilder(valueField, dataType)
      val ids = new Array[Long](Batch)
      var n = 0
      def flush(): Unit = if (n > 0) {
        writer.add(values.build(), java.util.Arrays.copyOf(ids, n))
        n = 0
      }
      // Rows of a collected partition share one buffer unless copied.
      val rows = sorted.queryExecution.toRdd.map(_.copy()).toLocalIterator
      rows.foreach { r =>
        values.add(r, 0)
        ids(n) = r.getLong(1)
        n += 1
        if (n == Batch) flush()
      }
      flush()
    }
  }

  def drop(table: LanceTable, name: String): Unit = {
    val read = LanceDataset.open(table.io, table.snapshot.root).open(VersionSpec.Latest)
    try ScalarIndexes.drop(table.io, read, name)
    catch {
      case _: LanceNotFoundException => throw new NoSuchIndexException(name, table.name(), None)
    }
  }

  def list(table: LanceTable): Array[TableIndex] =
    ScalarIndexes.list(table.io, table.snapshot).filterNot(_.getName.startsWith("__")).map { i =>
      val fields = i.getFieldsList.asScala.map { id =>
        val path = table.snapshot.schema.pathOf(id.intValue).getOrElse(Seq(s"<field $id>"))
        Expressions.column(path.map(n => s"`${n.replace("`", "``")}`").mkString("."))
      }.toArray
      new TableIndex(
        i.getName,
        typeName(i.getIndexDetails.getTypeUrl),
        fields,
        new util.HashMap(),
        new java.util.Properties()
      )
    }.toArray

  /** pylance's index type name (`list_indices()`'s `type`) of an index details type URL. */
  def typeName(typeUrl: String): String =
    typeUrl.split('/').last.split('.').last.stripSuffix("IndexDetails")
}
