package io.sparklance.spark.procedures

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types._

import io.sparklance.LanceErrors
import io.sparklance.spark.LanceMaintenance

/**
 * The `CALL <catalog>.system.<name>(...)` procedures of the Lance catalog (Spark 4), line
 * independent: each one's parameters (pylance's argument names, `table` first: a dataset
 * path, or a table of the catalog), what it returns (one row of pylance's statistics) and
 * how it runs (through [[LanceMaintenance]], as the Python helpers do). The Spark 4 shim
 * (`LanceProcedureCatalog`) binds them to Spark's procedure API.
 */
object LanceProcedures {

  /** One parameter: its name, type, and whether it must be given. */
  final case class Param(name: String, dataType: DataType, required: Boolean = false)

  /** One procedure. `run` gets the table's path and the given arguments by name. */
  final case class Spec(
      name: String,
      description: String,
      params: Seq[Param],
      output: StructType,
      run: (SparkSession, String, Map[String, Any]) => Seq[Any]
  )

  private def longs(names: String*): StructType =
    StructType(names.map(StructField(_, LongType, nullable = false)))

  private val table = Param("table", StringType, required = true)
  private def noOptions = new java.util.HashMap[String, String]()

  private def get[T](args: Map[String, Any], name: String): Option[T] =
    args.get(name).filter(_ != null).map(_.asInstanceOf[T])

  private def stats(m: java.util.Map[String, _], names: Seq[String]): Seq[Any] =
    names.map(n => m.get(n).asInstanceOf[Number].longValue)

  private val compactOut = Seq(
    "fragments_removed",
    "fragments_added",
    "files_removed",
    "files_added",
    "indexed_fragments_skipped"
  )
  private val cleanupOut = Seq(
    "bytes_removed",
    "old_versions",
    "data_files_removed",
    "transaction_files_removed",
    "index_files_removed",
    "deletion_files_removed"
  )

  val all: Seq[Spec] = Seq(
    Spec(
      "compact_files",
      "pylance's optimize.compact_files: rewrites small fragments and " +
        "fragments with many deleted rows, one Spark task per group",
      Seq(
        table,
        Param("target_rows_per_fragment", LongType),
        Param("max_rows_per_group", IntegerType),
        Param("max_bytes_per_file", LongType),
        Param("materialize_deletions", BooleanType),
        Param("materialize_deletions_threshold", DoubleType)
      ),
      longs(compactOut: _*),
      (spark, path, a) =>
        stats(
          LanceMaintenance.compactFiles(
            spark,
            path,
            get[Number](a, "target_rows_per_fragment").orNull,
            get[Number](a, "max_rows_per_group").orNull,
            get[Number](a, "max_bytes_per_file").orNull,
            get[java.lang.Boolean](a, "materialize_deletions").orNull,
            get[Number](a, "materialize_deletions_threshold").orNull,
            null,
            noOptions
          ),
          compactOut
        )
    ),
    Spec(
      "cleanup_old_versions",
      "pylance's cleanup_old_versions: removes old versions and " +
        "the files only they use (older_than: an interval, default 14 days)",
      Seq(
        table,
        Param("older_than", DayTimeIntervalType()),
        Param("retain_versions", IntegerType),
        Param("delete_unverified", BooleanType),
        Param("error_if_tagged_old_versions", BooleanType),
        Param("dry_run", BooleanType)
      ),
      longs(cleanupOut: _*),
      (spark, path, a) =>
        stats(
          LanceMaintenance.cleanupOldVersions(
            spark,
            path,
            get[Long](a, "older_than").map(us => java.lang.Double.valueOf(us / 1e6)).orNull,
            get[Int](a, "retain_versions").map(Int.box).orNull,
            get[Boolean](a, "delete_unverified").getOrElse(false),
            get[Boolean](a, "error_if_tagged_old_versions").getOrElse(true),
            get[Boolean](a, "dry_run").getOrElse(false),
            noOptions
          ).asScala.filter(_._1 !=
            "files").asJava,
          cleanupOut
        )
    ),
    Spec(
      "restore",
      "pylance's restore: a new version holding an older version's data " +
        "(version: a number or a tag name)",
      Seq(table, Param("version", StringType, required = true)),
      longs("version"),
      (spark, path, a) =>
        Seq(LanceMaintenance.restore(spark, path, get[String](a, "version").get, noOptions))
    ),
    Spec(
      "create_tag",
      "pylance's tags.create",
      Seq(
        table,
        Param(
          "tag",
          StringType,
          required =
            true
        ),
        Param("version", LongType, required = true)
      ),
      longs("version"),
      (spark, path, a) => {
        val v = get[Long](a, "version").get
        LanceMaintenance.createTag(spark, path, get[String](a, "tag").get, v, noOptions)
        Seq(v)
      }
    ),
    Spec(
      "update_tag",
      "pylance's tags.update",
      Seq(
        table,
        Param(
          "tag",
          StringType,
          required =
            true
        ),
        Param("version", LongType, required = true)
      ),
      longs("version"),
      (spark, path, a) => {
        val v = get[Long](a, "version").get
        LanceMaintenance.updateTag(spark, path, get[String](a, "tag").get, v, noOptions)
        Seq(v)
      }
    ),
    Spec(
      "delete_tag",
      "pylance's tags.delete",
      Seq(
        table,
        Param(
          "tag",
          StringType,
          required =
            true
        )
      ),
      StructType(Seq(StructField("deleted", BooleanType, nullable = false))),
      (spark, path, a) => {
        LanceMaintenance.deleteTag(spark, path, get[String](a, "tag").get, noOptions)
        Seq(true)
      }
    ),
    Spec(
      "create_branch",
      "pylance's create_branch (from a version of the main branch, or " +
        "of branch parent_branch)",
      Seq(
        table,
        Param("branch", StringType, required = true),
        Param("version", LongType, required = true),
        Param("parent_branch", StringType)
      ),
      longs("version"),
      (spark, path, a) => {
        val v = get[Long](a, "version").get
        LanceMaintenance.createBranch(
          spark,
          path,
          get[String](a, "branch").get,
          get[String](a, "parent_branch").orNull,
          v,
          noOptions
        )
        Seq(v)
      }
    ),
    Spec(
      "delete_branch",
      "pylance's branches.delete",
      Seq(table, Param("branch", StringType, required = true)),
      StructType(Seq(StructField("deleted", BooleanType, nullable = false))),
      (spark, path, a) => {
        LanceMaintenance.deleteBranch(spark, path, get[String](a, "branch").get, noOptions)
        Seq(true)
      }
    )
  )

  private val byName: Map[String, Spec] = all.map(s => s.name -> s).toMap

  /** The namespace procedures live in: `CALL lance.system.compact_files(...)`. */
  val Namespace = "system"

  def find(namespace: Seq[String], name: String): Option[Spec] =
    if (namespace == Seq(Namespace)) byName.get(name.toLowerCase) else None

  def unknown(name: String): Nothing =
    throw LanceErrors.unsupported(s"No Lance procedure '$name': the procedures are " +
      all.map(s => s"$Namespace.${s.name}").mkString(", "))
}
