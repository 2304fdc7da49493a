package io.sparklance.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.storage.{FileIO, RoutingFileIO}
import io.sparklance.table.LanceDataset

/** Resolves reader options to the table they name: a dataset version or a metadata table. */
object LanceTables {
  def load(spark: SparkSession, options: CaseInsensitiveStringMap): Table = {
    val conf = spark.sessionState.conf
    val opts = LanceReadOptions.parse(options, java.time.ZoneId.of(conf.sessionLocalTimeZone), conf.filesMaxPartitionBytes)
    val io = fileIO(spark, options)
    // A branch that does not exist is named as such (not as a missing directory).
    Option(options.get(LanceReadOptions.Branch)).map(_.trim).filter(_.nonEmpty).foreach { b =>
      _root_.io.sparklance.table.Branches.get(io, options.get(LanceReadOptions.Path), b)
    }
    val dataset = LanceDataset.open(io, opts.path)
    opts.metadataTable match {
      case Some(kind) => new LanceMetadataTable(dataset, kind)
      case None => new LanceTable(dataset.open(opts.versionSpec), io, opts)
    }
  }

  /** Storage access with the session's Hadoop configuration plus any `fs.*` reader options. */
  def fileIO(spark: SparkSession, options: CaseInsensitiveStringMap): FileIO =
    new RoutingFileIO(spark.sessionState.newHadoopConfWithOptions(options.asCaseSensitiveMap().asScala.toMap))

  def openCostBytes: Long = SQLConf.get.filesOpenCostInBytes
}
