package io.sparklance.spark

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.Table
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.util.CaseInsensitiveStringMap

import io.sparklance.storage.{FileIO, RoutingFileIO}
import io.sparklance.table.{LanceDataset, VersionSpec}

/** Resolves reader options to the table they name: a dataset version or a metadata table. */
object LanceTables {
  def load(spark: SparkSession, options: CaseInsensitiveStringMap): Table = {
    val opts = readOptions(spark, options)
    val io = fileIO(spark, options)
    // A branch that does not exist is named as such (not as a missing directory).
    Option(options.get(LanceReadOptions.Branch)).map(_.trim).filter(_.nonEmpty).foreach { b =>
      _root_.io.sparklance.table.Branches.get(io, options.get(LanceReadOptions.Path), b)
    }
    opts.metadataTable match {
      case Some(kind) => new LanceMetadataTable(LanceDataset.open(io, opts.path), kind)
      case None if opts.versionSpec == VersionSpec.Latest =>
        // One listing and one manifest read; the checks naming what is wrong only when
        // there is no manifest.
        latest(io, opts).getOrElse(
          new LanceTable(LanceDataset.open(io, opts.path).open(VersionSpec.Latest), io, opts)
        )
      case None => new LanceTable(LanceDataset.open(io, opts.path).open(opts.versionSpec), io, opts)
    }
  }

  /**
   * The table at the options' path, or None when no dataset is there yet. The latest version
   * of a path table costs one listing and one manifest read (a save's planning on S3).
   */
  def loadIfExists(spark: SparkSession, options: CaseInsensitiveStringMap): Option[Table] = {
    val opts = readOptions(spark, options)
    val plain = opts.metadataTable.isEmpty && opts.versionSpec == VersionSpec.Latest &&
      Option(options.get(LanceReadOptions.Branch)).forall(_.trim.isEmpty)
    if (!plain) {
      if (LanceProvider.datasetExists(spark, options)) Some(load(spark, options)) else None
    } else latest(fileIO(spark, options), opts)
  }

  /** The read options, with the session's time zone and split size. */
  private def readOptions(
      spark: SparkSession,
      options: CaseInsensitiveStringMap
  ): LanceReadOptions = {
    val conf = spark.sessionState.conf
    LanceReadOptions.parse(
      options,
      java.time.ZoneId.of(conf.sessionLocalTimeZone),
      conf.filesMaxPartitionBytes
    )
  }

  /** The latest version's table, if there is a manifest (one listing, one manifest read). */
  private def latest(io: FileIO, opts: LanceReadOptions): Option[LanceTable] =
    LanceDataset.latestIfAny(io, opts.path).map(s => new LanceTable(s, io, opts))

  /** Storage access with the session's Hadoop configuration plus any `fs.*` reader options. */
  def fileIO(spark: SparkSession, options: CaseInsensitiveStringMap): FileIO = {
    MetadataCacheConf()
    new RoutingFileIO(
      spark.sessionState.newHadoopConfWithOptions(options.asCaseSensitiveMap().asScala.toMap)
    )
  }

  def openCostBytes: Long = SQLConf.get.filesOpenCostInBytes
}
