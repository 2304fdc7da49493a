package io.sparklance.table.txn

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceUnsupportedException
import io.sparklance.storage.{FileEntry, FileIO, ObjectStores, RandomAccessInput, RoutingFileIO}
import io.sparklance.table.VersionLog

/**
 * Which commit each store gets: exclusive creates where the store has one, a refusal naming
 * the option where its Hadoop rename is a copy (two writers could both win a version), and
 * no version hint on object stores, where pylance writes none.
 */
class CommitHandlerSuite extends AnyFunSuite {
  private def routing(settings: (String, String)*): RoutingFileIO = {
    val conf = new Configuration(false)
    settings.foreach { case (k, v) => conf.set(k, v) }
    new RoutingFileIO(conf)
  }

  test("local files, HDFS and S3 commit with their own exclusive create") {
    val io = routing()
    assert(CommitHandler.forRoot(io, "/tmp/t.lance").isInstanceOf[LocalCommitHandler])
    assert(CommitHandler.forRoot(io, "file:///tmp/t.lance").isInstanceOf[LocalCommitHandler])
    assert(CommitHandler.forRoot(io, "hdfs://nn/t.lance").isInstanceOf[RenameCommitHandler])
    assert(CommitHandler.forRoot(io, "s3://b/t.lance").isInstanceOf[RenameCommitHandler])
  }

  test("stores whose Hadoop rename is a copy are refused, naming the option") {
    for (scheme <- ObjectStores.RenameIsCopySchemes.toSeq.sorted) {
      val root = s"$scheme://bucket/path/t.lance"
      val e = intercept[LanceUnsupportedException](CommitHandler.forRoot(routing(), root))
      assert(
        e.getMessage.contains(root) && e.getMessage.contains("unsafe_rename_commit=true") &&
          e.getMessage.contains("s3+ddb://"),
        e.getMessage
      )
    }
  }

  test("a single writer may accept rename commits there") {
    val io = routing(CommitHandler.UnsafeRenameCommit -> "true")
    assert(CommitHandler.forRoot(io, "gs://b/t.lance").isInstanceOf[RenameCommitHandler])
    assert(CommitHandler.forRoot(io, "abfss://c@a.dfs.core.windows.net/t.lance")
      .isInstanceOf[RenameCommitHandler])
    intercept[LanceUnsupportedException](
      CommitHandler.forRoot(routing(CommitHandler.UnsafeRenameCommit -> "false"), "gs://b/t")
    )
  }

  test("no version hint is written on object stores") {
    val untouched = new FileIO {
      private def no = fail("an object store's version hint was written")
      def exists(path: String): Boolean = no
      def isDirectory(path: String): Boolean = no
      def list(dir: String): Seq[FileEntry] = no
      def size(path: String): Long = no
      def readFully(path: String): Array[Byte] = no
      def readRange(path: String, offset: Long, length: Int): Array[Byte] = no
      def open(path: String): RandomAccessInput = no
      def createIfAbsent(path: String, bytes: Array[Byte]): Boolean = no
      def write(path: String, bytes: Array[Byte]): Unit = no
      def create(path: String): java.io.OutputStream = no
      def delete(path: String): Boolean = no
    }
    for (root <- Seq("s3://b/t.lance", "s3a://b/t.lance", "s3+ddb://b/t.lance", "gs://b/t"))
      new VersionLog(untouched, root).writeHint(3)
  }
}
