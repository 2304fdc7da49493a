package io.sparklance.testutil

import scala.jdk.CollectionConverters._

import com.google.protobuf.TextFormat

import io.sparklance.proto.TableProtos
import io.sparklance.table.{RowIdSequences, Snapshot}

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
    // Row lineage is compared decoded: writers may encode the same ids and versions apart.
    val lineage = b.getFragmentsBuilderList.asScala.map { f =>
      f.getFilesBuilderList.asScala.foreach(_.clearPath().clearFileSizeBytes())
      if (f.hasDeletionFile) f.getDeletionFileBuilder.clearId().clearReadVersion()
      val rows = f.getPhysicalRows.toInt
      val ids = RowIdSequences.rowIds(f.build()).map(_.mkString(","))
      val created = RowIdSequences.versions(f.getInlineCreatedAtVersions, rows, 0L).mkString(",")
      val updated =
        RowIdSequences.versions(f.getInlineLastUpdatedAtVersions, rows, 0L).mkString(",")
      f.clearInlineRowIds().clearInlineCreatedAtVersions().clearInlineLastUpdatedAtVersions()
      s"fragment ${f.getId}: row ids ${ids.getOrElse("-")}; created $created; updated $updated"
    }
    TextFormat.printer().printToString(b.build()) + lineage.mkString("\n")
  }

  /** The manifest's config and metadata maps, sorted, for messages. */
  def maps(m: TableProtos.Manifest): String =
    s"config=${m.getConfigMap.asScala.toSeq.sorted} " +
      s"table_metadata=${m.getTableMetadataMap.asScala.toSeq.sorted}"
}
