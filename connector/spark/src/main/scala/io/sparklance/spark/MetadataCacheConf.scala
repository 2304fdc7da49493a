package io.sparklance.spark

import org.apache.spark.{SparkConf, SparkEnv}

import io.sparklance.LanceErrors
import io.sparklance.format.FileMetadataCache

/**
 * The size of this JVM's cache of Lance data file metadata ([[FileMetadataCache]]), from the
 * Spark configuration the JVM started with: `spark.lance.metadataCacheSize` (bytes, or with a
 * unit as Spark's sizes take them: `256m`, `1g`; `0` turns the cache off; default 128m).
 * Read where a JVM first plans or reads a Lance table (the driver, each executor), again
 * only when the configuration object changes (a new SparkContext in the same JVM).
 */
private[spark] object MetadataCacheConf {
  val Key = "spark.lance.metadataCacheSize"

  @volatile private var applied: SparkConf = _

  def apply(): Unit = {
    val env = SparkEnv.get
    if (env != null && (env.conf ne applied)) {
      val conf = env.conf
      val bytes = conf.getOption(Key).map(parse).getOrElse(FileMetadataCache.DefaultCapacity)
      FileMetadataCache.shared.setCapacity(bytes)
      applied = conf
    }
  }

  private[spark] def parse(value: String): Long = {
    val bytes =
      try org.apache.spark.network.util.JavaUtils.byteStringAsBytes(value.trim)
      catch {
        case e: NumberFormatException =>
          throw LanceErrors.invalidOption(
            Key,
            value,
            s"a size in bytes, or with a unit (256m, 1g) is expected: ${e.getMessage}"
          )
      }
    if (bytes < 0) throw LanceErrors.invalidOption(Key, value, "a size cannot be negative")
    bytes
  }
}
