package io.sparklance.table

import scala.jdk.CollectionConverters._

import io.sparklance.proto.TableProtos

/**
 * What pylance's `versions()` reports as each version's `metadata`: counts and sizes summed
 * over the manifest's fragments, from the manifest alone (no file is opened). Data file rows
 * are the fragments' physical rows; the size is the data files' recorded sizes (deletion
 * files are not counted, as pylance 14 counts them).
 */
object ManifestSummary {
  def of(m: TableProtos.Manifest): Map[String, String] = {
    val frags = m.getFragmentsList.asScala
    val physical = frags.map(_.getPhysicalRows).sum
    val deleted = frags.filter(_.hasDeletionFile).map(_.getDeletionFile.getNumDeletedRows).sum
    Map(
      "total_fragments" -> frags.size.toLong,
      "total_data_files" -> frags.map(_.getFilesCount.toLong).sum,
      "total_files_size" -> frags.flatMap(_.getFilesList.asScala).map(_.getFileSizeBytes).sum,
      "total_deletion_files" -> frags.count(_.hasDeletionFile).toLong,
      "total_data_file_rows" -> physical,
      "total_deletion_file_rows" -> deleted,
      "total_rows" -> (physical - deleted)
    ).map { case (k, v) => k -> v.toString }
  }
}
