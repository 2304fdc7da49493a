package io.sparklance.table.txn

import io.sparklance.storage.FileIO

/**
 * HDFS and other Hadoop file systems whose rename fails when the target exists: the manifest
 * is written to a temporary file and renamed into place (`HadoopFileIO.createIfAbsent` on a
 * non-`file:` scheme). Not safe on object stores whose "rename" is copy-and-delete.
 */
final class RenameCommitHandler(fileIO: FileIO) extends CommitHandler {
  override def commit(path: String, bytes: Array[Byte]): Boolean =
    fileIO.createIfAbsent(path, bytes)
}
