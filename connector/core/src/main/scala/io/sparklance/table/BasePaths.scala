package io.sparklance.table

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos

/**
 * Data files may live outside the dataset directory: `DataFile.base_id` names an entry of
 * `Manifest.base_paths`, whose `path` is the root to resolve against (its `data/`
 * subdirectory when `is_dataset_root`).
 */
object BasePaths {
  def dataDir(snapshot: Snapshot, defaultDataDir: String, df: TableProtos.DataFile): String =
    if (!df.hasBaseId) defaultDataDir
    else {
      val base = find(snapshot, df.getBaseId, s"data file ${df.getPath}")
      if (base.getIsDatasetRoot) DatasetLayout.dataDir(base.getPath) else base.getPath
    }

  /** The root whose `_deletions/` holds a deletion file. */
  def root(snapshot: Snapshot, defaultRoot: String, df: TableProtos.DeletionFile): String =
    if (!df.hasBaseId) defaultRoot else find(snapshot, df.getBaseId, "a deletion file").getPath

  private def find(snapshot: Snapshot, id: Int, what: String): TableProtos.BasePath =
    snapshot.manifest.getBasePathsList.asScala.find(_.getId == id).getOrElse(
      throw LanceErrors.corruptFile(
        snapshot.manifestPath,
        s"$what names base path $id, which the manifest does not define"
      )
    )
}
