package io.sparklance.table.txn

import io.sparklance.storage.FileIO

/**
 * Puts a manifest at its version's path so that exactly one of several racing writers wins.
 * This is the seam per store: the local and HDFS handlers use the file system's own
 * never-replace primitive; an object-store handler (conditional put, or an external lock)
 * plugs in here later.
 */
trait CommitHandler extends Serializable {
  /** Writes `bytes` at `path` unless something is there; false when another writer was first. */
  def commit(path: String, bytes: Array[Byte]): Boolean
}

object CommitHandler {
  /** The handler for where `root` lives: local files or HDFS (Hadoop's never-replacing rename). */
  def forRoot(fileIO: FileIO, root: String): CommitHandler = {
    val scheme = Option(new java.net.URI(root.replace(" ", "%20")).getScheme).getOrElse("file")
    if (scheme == "file") new LocalCommitHandler(fileIO) else new RenameCommitHandler(fileIO)
  }
}
