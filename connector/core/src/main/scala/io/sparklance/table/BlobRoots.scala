package io.sparklance.table

import scala.jdk.CollectionConverters._

/**
 * The roots blob descriptors are relative to: the dataset root and the manifest's base paths
 * (`base_paths`, by id). Serializable; it travels to executors inside fragment refs.
 */
final case class BlobRoots(datasetRoot: String, bases: Map[Int, String])
object BlobRoots {
  val None: BlobRoots = BlobRoots("", Map.empty)

  def apply(snapshot: Snapshot): BlobRoots =
    BlobRoots(
      snapshot.root,
      snapshot.manifest.getBasePathsList.asScala.map(b => b.getId -> b.getPath).toMap
    )
}
