package io.sparklance.table.maintenance

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
