package io.sparklance.spark

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SQLContext, SaveMode, SparkSession}
import org.apache.spark.sql.connector.catalog.{Table, TableProvider}
import org.apache.spark.sql.connector.expressions.Transform
import org.apache.spark.sql.sources.{BaseRelation, CreatableRelationProvider}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.LanceErrors
import io.sparklance.spark.errors.SparkErrors
import io.sparklance.spark.write.LanceSave
import io.sparklance.table.DatasetLayout

/**
 * What [[LanceDataSource]] (the class Spark finds through `DataSourceRegister`) hands every
 * call to, once it has checked that this jar was built for the running Spark line.
 *
 * `spark.read.format("lance")` and `df.write.format("lance")`. For reads the schema comes
 * from the dataset's manifest. Session confs `spark.datasource.lance.<option>` act as
 * defaults for reader options.
 *
 * Writes: Spark gives a plain TableProvider no way to honour error-if-exists or ignore, so
 * the tables returned here are read-only and Spark hands every save to
 * [[CreatableRelationProvider.createRelation]], which settles the save mode like Parquet does
 * and runs the DataSource V2 write command `writeTo` would ([[LanceSave]]).
 */
class LanceProvider extends TableProvider with CreatableRelationProvider {

  /**
   * The table `inferSchema` loaded, for the `getTable` call Spark makes next on this same
   * instance (a new one per read): one dataset open per read, not two — on an object store,
   * each open is requests.
   */
  private var inferred: Option[(Map[String, String], Table)] = None

  override def inferSchema(options0: CaseInsensitiveStringMap): StructType = SparkErrors.spark {
    val options = LanceProvider.withPathQuery(options0)
    val table = LanceTables.load(session, options)
    inferred = Some((options.asCaseSensitiveMap().asScala.toMap, table))
    table.schema()
  }

  /** True so that saving to a path with no dataset yet does not infer (and fail on) its schema. */
  override def supportsExternalMetadata(): Boolean = true

  override def getTable(
      schema: StructType,
      partitioning: Array[Transform],
      properties0: util.Map[String, String]
  ): Table = SparkErrors.spark {
    // A catalog's table brings its properties (owner, comment, TBLPROPERTIES), not options.
    val given = if (!LanceOptionNames.isCatalogTable(properties0)) properties0
    else LanceOptionNames.optionsAmong(properties0.asScala.toMap).asJava
    val options = LanceProvider.withPathQuery(new CaseInsensitiveStringMap(given))
    val properties = options.asCaseSensitiveMap()
    val path = options.get("path")
    if (partitioning.nonEmpty)
      throw LanceErrors.unsupported(
        s"Lance datasets are not partitioned (${partitioning.mkString(", ")})"
      )
    // The session catalog checks a new table's schema here, with no path for managed tables.
    if (path == null)
      new LanceMissingTable(Option(options.get("location")).getOrElse("(new table)"), schema)
    else inferred.collect {
      case (o, t) if o == properties.asScala.toMap && t.schema() == schema => t
    }
      .getOrElse {
        val found = LanceTables.loadIfExists(session, options)
        LanceProvider.looked(options, found)
        found.getOrElse(new LanceMissingTable(path, schema))
      }
  }

  override def createRelation(
      sqlContext: SQLContext,
      mode: SaveMode,
      parameters0: Map[String, String],
      data: DataFrame
  ): BaseRelation = SparkErrors.spark {
    val options = LanceProvider.withPathQuery(new CaseInsensitiveStringMap(parameters0.asJava))
    val path = Option(options.get("path")).filter(_.nonEmpty).getOrElse(
      throw LanceErrors.invalidOption(
        "path",
        "",
        "a Lance dataset path is required: " +
          "df.write.format(\"lance\").save(path)"
      )
    )
    Option(options.get("__partition_columns")).filter(c => c.nonEmpty && c != "[]").foreach { c =>
      throw LanceErrors.unsupported(s"Cannot write Lance dataset $path partitioned by $c: Lance " +
        "datasets have no Hive-style partitions; write without partitionBy")
    }
    LanceSave.run(sqlContext.sparkSession, mode, options, data, LanceProvider.takeLooked(options))
    val s = data.schema
    new BaseRelation {
      override def sqlContext: SQLContext = sqlContext0
      override def schema: StructType = s
      private def sqlContext0 = sqlContext
    }
  }

  private def session: SparkSession = SparkSession.active
}

object LanceProvider {

  /**
   * What the last `getTable` of this thread found at a path, with the options it was given:
   * `df.write.save()` calls `getTable` and then, on the same thread, `createRelation`, which
   * takes it instead of reading the dataset again (on an object store, a listing and a
   * manifest read). Weakly held, so a read's entry never keeps a table alive, and taken only
   * within seconds of the lookup.
   */
  private val lastLooked = new ThreadLocal[
    (Map[String, String], Option[java.lang.ref.WeakReference[LanceTable]], Long)
  ]
  private val LookedForNanos = 10L * 1000 * 1000 * 1000

  private def key(options: CaseInsensitiveStringMap): Map[String, String] =
    options.asCaseSensitiveMap().asScala.toMap.filter { case (k, _) => !k.startsWith("__") }

  private def looked(options: CaseInsensitiveStringMap, found: Option[Table]): Unit = {
    val latest = !write.LanceSave.latestOnly(key(options))._2
    found match {
      case _ if !latest => lastLooked.remove()
      case Some(t: LanceTable) =>
        lastLooked.set((key(options), Some(new java.lang.ref.WeakReference(t)), System.nanoTime))
      case None => lastLooked.set((key(options), None, System.nanoTime))
      case Some(_) => lastLooked.remove()
    }
  }

  /** This thread's last `getTable` result for exactly these options, taken once. */
  private def takeLooked(options: CaseInsensitiveStringMap): Option[Option[LanceTable]] = {
    val entry = lastLooked.get()
    lastLooked.remove()
    Option(entry).filter(e => e._1 == key(options) && System.nanoTime - e._3 < LookedForNanos)
      .flatMap {
        case (_, None, _) => Some(None)
        case (_, Some(ref), _) => Option(ref.get()).map(Some(_))
      }
  }

  /**
   * pylance's `s3+ddb://bucket/path?ddbTableName=t`: the query's settings become options
   * (`ddbTableName`), the path loses its query. Other paths are left alone.
   */
  def withPathQuery(options: CaseInsensitiveStringMap): CaseInsensitiveStringMap = {
    val (bare, settings) = DatasetLayout.splitQuery(options.get("path"))
    if (settings.isEmpty) return options
    new CaseInsensitiveStringMap(
      (options.asCaseSensitiveMap().asScala.toMap ++ settings + ("path" -> bare)).asJava
    )
  }

  /** A Lance dataset is there: a `_versions/` directory holding at least one manifest. */
  def datasetExists(spark: SparkSession, options: CaseInsensitiveStringMap): Boolean = {
    DatasetLayout.hasDataset(LanceTables.fileIO(spark, options), options.get("path"))
  }
}
