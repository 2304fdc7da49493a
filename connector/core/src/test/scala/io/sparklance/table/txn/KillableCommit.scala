package io.sparklance.table.txn

import io.sparklance.storage.HadoopFileIO
import io.sparklance.table.{LanceDataset, VersionSpec}

/**
 * The child process of [[KillAtCommitSuite]]: commits one of our operations on the dataset
 * at `path` with the JVM told to hold the commit at a point (`sparklance.test.commitPause`),
 * where the suite kills it.
 *
 *   KillableCommit <operation> <path>
 */
object KillableCommit {
  def main(args: Array[String]): Unit = {
    val Array(kind, path) = args
    val fileIO = HadoopFileIO.local()
    val read = LanceDataset.open(fileIO, path).open(VersionSpec.Latest)
    KillAtCommitSuite.operations(kind).run(fileIO, read)
    System.err.println("commit finished: the pause did not happen")
    System.exit(3)
  }
}
