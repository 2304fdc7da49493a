package io.sparklance.table.txn

import io.sparklance.storage.FileIO

/**
 * Local files: the manifest is written to a private temporary file and hard-linked into
 * place (`link(2)` fails with EEXIST), as `HadoopFileIO.createIfAbsent` does for `file:`;
 * a plain rename would silently replace a manifest another writer committed.
 */
final class LocalCommitHandler(fileIO: FileIO) extends CommitHandler {
  override def commit(path: String, bytes: Array[Byte]): Boolean =
    fileIO.createIfAbsent(path, bytes)
}
