package io.sparklance.table

import scala.jdk.CollectionConverters._

import io.sparklance.format.LanceSchema
import io.sparklance.proto.TableProtos

/**
 * One version of a dataset as its manifest describes it: schema, fragments, flags.
 * Immutable; everything a scan plans from is fixed here, so a whole query reads one version
 * however many commits land meanwhile.
 *
 * @param indexSectionBytes the manifest's index section, when reading the manifest read it
 *                          (see [[ManifestFile.indices]]); its indices are decoded once.
 */
final class Snapshot(
    val root: String,
    val version: Long,
    val manifestPath: String,
    val naming: ManifestNaming,
    val manifest: TableProtos.Manifest,
    val indexSectionBytes: Option[Array[Byte]] = None
) {

  @volatile private var indexList: Seq[TableProtos.IndexMetadata] = _

  /** The indices of this version: `read` (the index section decoded) the first time only. */
  private[table] def indices(read: => Seq[TableProtos.IndexMetadata])
      : Seq[TableProtos.IndexMetadata] = {
    var l = indexList
    if (l == null) { l = read; indexList = l }
    l
  }

  lazy val schema: LanceSchema = LanceSchema.fromProto(
    manifest.getFieldsList.asScala.toSeq,
    manifest.getSchemaMetadataMap.asScala.map { case (k, v) => k -> v.toByteArray }.toMap,
    manifestPath
  )

  def fragments: Seq[TableProtos.DataFragment] = manifest.getFragmentsList.asScala.toSeq

  /** Commit time in microseconds since the epoch (0 when the manifest has none). */
  def timestampMicros: Long =
    if (!manifest.hasTimestamp) 0L
    else manifest.getTimestamp.getSeconds * 1000000L + manifest.getTimestamp.getNanos / 1000

  /** The data storage version recorded for new files ("2.0", "2.2", ...), or "0.1" for legacy datasets. */
  def dataStorageVersion: String =
    if (manifest.hasDataFormat && manifest.getDataFormat.getVersion.nonEmpty)
      manifest.getDataFormat.getVersion
    else "0.1"

  def readerFeatureFlags: Long = manifest.getReaderFeatureFlags
  def writerFeatureFlags: Long = manifest.getWriterFeatureFlags

  def physicalRows: Long = fragments.map(_.getPhysicalRows).sum

  override def toString: String = s"Snapshot($root@v$version)"
}
