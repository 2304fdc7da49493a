package io.sparklance.table.maintenance

import scala.collection.mutable
import scala.concurrent.duration._
import scala.jdk.CollectionConverters._

import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, LanceField, ListArray, NullArray, StructArray}
import io.sparklance.format.blob.{BlobColumn, BlobDescriptors, BlobKind}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileEntry, FileIO, Paths}
import io.sparklance.table.{
  Branches,
  DataFileRef,
  DatasetLayout,
  DeletionVector,
  FragmentRef,
  LanceDataset,
  ManifestFile,
  Snapshot,
  Tags,
  VersionSpec
}
import io.sparklance.table.txn.WritePlan

/** pylance's CleanupStats, plus the files removed (or, in a dry run, that would be). */
final case class CleanupStats(
    bytesRemoved: Long,
    oldVersions: Long,
    dataFilesRemoved: Long,
    transactionFilesRemoved: Long,
    indexFilesRemoved: Long,
    deletionFilesRemoved: Long,
    files: Seq[String]
)
