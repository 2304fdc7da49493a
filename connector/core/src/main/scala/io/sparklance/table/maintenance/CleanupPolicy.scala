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

/**
 * Which versions `cleanup_old_versions` removes, as pylance 14 takes its arguments: versions
 * older than `olderThan` and not among the last `retainVersions` (two weeks when neither is
 * given); the latest and tagged versions are always kept.
 */
final case class CleanupPolicy(
    olderThan: Option[FiniteDuration] = None,
    retainVersions: Option[Int] = None,
    deleteUnverified: Boolean = false,
    errorIfTaggedOldVersions: Boolean = true
) {
  retainVersions.foreach(n => require(n > 0, s"retain_versions must be positive, not $n"))
}
