package io.sparklance.table.maintenance

import io.sparklance.LanceErrors

/**
 * pylance's `CompactionOptions` (`ds.optimize.compact_files(...)`), with its defaults:
 *  - `targetRowsPerFragment`: fragments with fewer rows are compacted with their neighbours;
 *    new fragments hold up to this many rows;
 *  - `maxRowsPerGroup`: kept for pylance's signature (Lance 2.x files have no row groups);
 *  - `maxBytesPerFile`: a new fragment also ends at this size (default 90 GiB, as writes);
 *  - `materializeDeletions` / `materializeDeletionsThreshold`: a fragment with more than
 *    this fraction of its rows deleted is rewritten even alone, dropping the deleted rows;
 *  - `deferIndexRemap`: pylance's fragment-reuse index, not written by this connector
 *    (refused when true).
 */
final case class CompactionOptions(
    targetRowsPerFragment: Long = 1024L * 1024,
    maxRowsPerGroup: Int = 1024,
    maxBytesPerFile: Long = 90L * 1024 * 1024 * 1024,
    materializeDeletions: Boolean = true,
    materializeDeletionsThreshold: Double = 0.1,
    deferIndexRemap: Boolean = false
) {

  def validated(): CompactionOptions = {
    if (targetRowsPerFragment <= 0)
      throw LanceErrors.invalidOption(
        "target_rows_per_fragment",
        targetRowsPerFragment.toString,
        "must be positive"
      )
    if (maxRowsPerGroup <= 0)
      throw LanceErrors.invalidOption(
        "max_rows_per_group",
        maxRowsPerGroup.toString,
        "must be positive"
      )
    if (maxBytesPerFile <= 0)
      throw LanceErrors.invalidOption(
        "max_bytes_per_file",
        maxBytesPerFile.toString,
        "must be positive"
      )
    if (deferIndexRemap)
      throw LanceErrors.invalidOption(
        "defer_index_remap",
        "true",
        "the fragment-reuse index " +
          "is not written by this connector; compact without it"
      )
    // As pylance: a threshold of 100% or more turns materializing deletions off.
    if (materializeDeletions && materializeDeletionsThreshold >= 1.0)
      copy(materializeDeletions = false)
    else this
  }
}
