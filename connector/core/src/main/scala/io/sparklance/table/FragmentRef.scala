package io.sparklance.table

import scala.jdk.CollectionConverters._

import io.sparklance.storage.Paths
import io.sparklance.proto.TableProtos

/** What a reader needs to know about one fragment, detached from the manifest protobuf. */
final case class FragmentRef(
    id: Long,
    /** As recorded; see [[RowCounts.physicalRows]] for when it can be trusted. */
    physicalRows: Long,
    /** Manifests without a writer version (Lance before 0.8) could record wrong row counts. */
    physicalRowsTrusted: Boolean,
    files: Seq[DataFileRef],
    deletionPath: Option[String],
    deletionIsBitmap: Boolean,
    numDeletedRows: Long,
    /** Where blob descriptors that name no data file point (managed and external blobs). */
    blobRoots: BlobRoots = BlobRoots.None,
    /** Row ids and row versions, attached when a scan returns them (see FragmentLineage). */
    lineage: Option[FragmentLineage] = None,
    /**
     * The row offsets a scalar index says can pass the scan's filter (see IndexPruning): a
     * reader with that filter skips batches holding none of them. None: any row may.
     */
    rowCandidates: Option[org.roaringbitmap.RoaringBitmap] = None
)
object FragmentRef {
  def apply(root: String, snapshot: Snapshot, f: TableProtos.DataFragment): FragmentRef = {
    val dataDir = DatasetLayout.dataDir(root)
    FragmentRef(
      id = f.getId,
      physicalRows = f.getPhysicalRows,
      physicalRowsTrusted = snapshot.manifest.hasWriterVersion,
      files = f.getFilesList.asScala.toSeq.map { df =>
        DataFileRef(
          path = Paths.join(BasePaths.dataDir(snapshot, dataDir, df), df.getPath),
          fieldIds = df.getFieldsList.asScala.map(_.intValue).toArray,
          columnIndices = df.getColumnIndicesList.asScala.map(_.intValue).toArray,
          major = df.getFileMajorVersion,
          minor = df.getFileMinorVersion,
          sizeBytes = df.getFileSizeBytes,
          baseId = if (df.hasBaseId) Some(df.getBaseId) else None
        )
      },
      deletionPath = if (f.hasDeletionFile) Some(DeletionVector.path(
        BasePaths.root(snapshot, root, f.getDeletionFile),
        f.getId,
        f.getDeletionFile
      ))
      else None,
      deletionIsBitmap = f.hasDeletionFile &&
        f.getDeletionFile.getFileType == TableProtos.DeletionFile.DeletionFileType.BITMAP,
      numDeletedRows = if (f.hasDeletionFile) f.getDeletionFile.getNumDeletedRows else 0L,
      blobRoots = BlobRoots(snapshot)
    )
  }
}
