package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SaveMode, SparkSession}
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.{BinaryType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.spark.LanceTable
import io.sparklance.storage.Paths

/**
 * `df.write.format("lance").mode(m).save(path)`: settles the save mode as Parquet does (error
 * if the dataset exists, do nothing if it does, append, overwrite), then hands Spark the
 * DataSource V2 write command `writeTo` would build ([[V2WriteCommands]]) on a
 * [[LanceSaveTable]]: an append to an existing dataset is fitted to its schema by Spark's own
 * resolution, and the write commits once through [[LanceWriteBuilder]].
 *
 * What the save settled (create only, the version found, a `replaceWhere` condition) travels
 * in the table's [[WriteIntent]], never in options.
 */
private[spark] object LanceSave {

  /**
   * Runs the save. `found`: the dataset at the path as Spark's lookup already loaded it
   * (`Some(None)`: none there), or `None` to look now.
   */
  def run(
      spark: SparkSession,
      mode: SaveMode,
      options: CaseInsensitiveStringMap,
      data: DataFrame,
      found: Option[Option[LanceTable]]
  ): Unit = {
    val path = options.get("path")
    val params = options.asCaseSensitiveMap().asScala.toMap
    val table = found.getOrElse(lookUp(spark, options))
    val snapshot = table.map(_.snapshot)
    val mergeSchema = Option(options.get(LanceWriteOptions.MergeSchema))
      .exists(_.trim.equalsIgnoreCase("true"))
    // replaceWhere with an overwrite replaces only the matching rows; with any other mode it
    // stays among the write's options, which refuse it.
    val replaceWhere = Option(options.get("replaceWhere")).filter(_ => mode == SaveMode.Overwrite)
    val writeOptions = if (replaceWhere.isEmpty) params
    else params.filter { case (k, _) => !k.equalsIgnoreCase("replaceWhere") }
    val base = WriteIntent(found = Some(snapshot), replaceWhere = replaceWhere)

    // A blob column (binary in the dataset's schema) may be given as {data, uri, ...} values
    // (external blobs): the table takes the DataFrame's struct there, which the writer checks.
    def blobsAsGiven(table: StructType, df: StructType): StructType = {
      val resolver = spark.sessionState.conf.resolver
      StructType(table.fields.map { f =>
        df.fields.find(d => resolver(d.name, f.name)) match {
          case Some(d)
              if f.dataType == BinaryType && d.dataType.isInstanceOf[StructType] &&
                SparkToLance.isBlobRequest(f.metadata, f.name) => f.copy(dataType = d.dataType)
          case _ => f
        }
      })
    }

    def write(intent: WriteIntent, fitted: Boolean, overwrite: Boolean): Unit = {
      val schema = if (fitted) blobsAsGiven(table.get.schema(), data.schema) else data.schema
      // A column the dataset lacks: named with the option that would add it (Spark's own
      // refusal does not know mergeSchema).
      if (fitted) {
        val resolver = spark.sessionState.conf.resolver
        data.schema.fieldNames.find(c => !schema.fieldNames.exists(resolver(_, c))).foreach { c =>
          throw SparkToLance.notInDataset(path, c, schema.fieldNames.toSeq)
        }
      }
      val target = new LanceSaveTable(path, schema, writeOptions, intent, fitted)
      val relation = DataSourceV2Relation.create(target, None, None)
      val query = data.queryExecution.analyzed
      val command =
        if (overwrite) V2WriteCommands.overwrite(relation, query)
        else V2WriteCommands.append(relation, query)
      spark.sessionState.executePlan(command).assertCommandExecuted()
    }

    mode match {
      case SaveMode.ErrorIfExists | SaveMode.Ignore =>
        if (table.isEmpty) write(base.copy(createOnly = true), fitted = false, overwrite = false)
        else if (mode == SaveMode.ErrorIfExists)
          throw LanceErrors.datasetExists(Paths.stripTrailingSlash(path))
      case SaveMode.Append =>
        write(base, fitted = table.isDefined && !mergeSchema, overwrite = false)
      case SaveMode.Overwrite =>
        write(base, fitted = table.isDefined && replaceWhere.isDefined, overwrite = true)
    }
  }

  /**
   * The latest version at the options' path (or branch), if there is a dataset: a write goes
   * on top of the latest version whatever read options (`version`, ...) the save carries.
   */
  private def lookUp(spark: SparkSession, options: CaseInsensitiveStringMap): Option[LanceTable] = {
    val latest = new CaseInsensitiveStringMap(
      latestOnly(options.asCaseSensitiveMap().asScala.toMap)._1.asJava
    )
    io.sparklance.spark.LanceTables.loadIfExists(spark, latest).map {
      case t: LanceTable => t
      case other => throw new IllegalStateException(s"not a dataset version: ${other.name()}")
    }
  }

  /** Read options that pick another version or table than the latest (lower case). */
  /**
   * `options` without the keys that pick another version than the latest (time travel, a
   * metadata table), and whether it had any: a save writes on the latest version whatever
   * they say, and shares a dataset lookup only when they say nothing.
   */
  def latestOnly(options: Map[String, String]): (Map[String, String], Boolean) = {
    val (other, latest) = options.partition { case (k, _) =>
      ReadOnly(k.toLowerCase(java.util.Locale.ROOT))
    }
    (latest, other.nonEmpty)
  }

  private val ReadOnly: Set[String] = {
    import io.sparklance.spark.LanceReadOptions._
    Set(Version, Tag, Timestamp, VersionAsOf, TimestampAsOf, MetadataTableKey)
      .map(_.toLowerCase(java.util.Locale.ROOT))
  }
}
