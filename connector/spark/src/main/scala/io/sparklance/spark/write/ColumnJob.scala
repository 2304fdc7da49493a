package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.storage.{Paths, RoutingFileIO}

/**
 * What a column job (a backfill, an update written as columns) starts from: its options with
 * the table's path, parsed as write options; the Hadoop configuration and storage they give;
 * and the options the job's own reads of the table take — every option but the path, so
 * that S3 settings (`aws_endpoint`, …) reach them as well as `fs.*` ones.
 */
private[write] final class ColumnJob(
    spark: SparkSession,
    path: String,
    options: java.util.Map[String, String]
) {
  val root: String = Paths.stripTrailingSlash(path)
  private val all: Map[String, String] =
    Option(options).map(_.asScala.toMap).getOrElse(Map.empty) + (LanceWriteOptions.Path -> root)
  val opts: LanceWriteOptions = LanceWriteOptions.parse(new CaseInsensitiveStringMap(all.asJava))
  val hadoop: Configuration = spark.sessionState.newHadoopConfWithOptions(all)
  val io: RoutingFileIO = new RoutingFileIO(hadoop)
  val readOptions: Map[String, String] =
    all.filterNot(_._1.equalsIgnoreCase(LanceWriteOptions.Path))
}
