package io.sparklance.testutil

import scala.jdk.CollectionConverters._

import com.google.protobuf.TextFormat

import io.sparklance.proto.TableProtos
import io.sparklance.table.Snapshot

/**
 * A manifest as text without what differs between two writers doing the same thing: the
 * timestamp, the writer, the transaction file and the section offsets, the names and sizes
 * of data files and the random ids of deletion files. Two manifests of twin datasets that
 * print the same hold the same table, ids, flags, schema, config and metadata.
 */
object ManifestView {
  def of(s: Snapshot): String = {
    val b = s.manifest.toBuilder.clearTimestamp().clearWriterVersion().clearTransactionFile()
      .clearTransactionSection().clearIndexSection()
    b.getFragmentsBuilderList.asScala.foreach { f =>
      f.getFilesBuilderList.asScala.foreach(_.clearPath().clearFileSizeBytes())
      if (f.hasDeletionFile) f.getDeletionFileBuilder.clearId().clearReadVersion()
    }
    TextFormat.printer().printToString(b.build())
  }

  /** The manifest's config and metadata maps, sorted, for messages. */
  def maps(m: TableProtos.Manifest): String =
    s"config=${m.getConfigMap.asScala.toSeq.sorted} " +
      s"table_metadata=${m.getTableMetadataMap.asScala.toSeq.sorted}"
}
