package io.sparklance.table

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.io.Paths
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
      val bases = snapshot.manifest.getBasePathsList.asScala
      val base = bases.find(_.getId == df.getBaseId).getOrElse(
        throw LanceErrors.corruptFile(snapshot.manifestPath,
          s"data file ${df.getPath} names base path ${df.getBaseId}, which the manifest does not define"))
      if (base.getIsDatasetRoot) Paths.join(base.getPath, "data") else base.getPath
    }
}
