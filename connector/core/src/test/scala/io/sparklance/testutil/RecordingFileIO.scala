package io.sparklance.testutil

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import io.sparklance.storage.{FileEntry, FileIO, HadoopFileIO, RandomAccessInput}

/**
 * A local FileIO that records what is read: every file opened for ranged reads, every ranged
 * read (path, offset, length) and every whole-file read. For tests of what a scan touches.
 */
final class RecordingFileIO(inner: FileIO = HadoopFileIO.local()) extends FileIO {
  val opened = new ConcurrentLinkedQueue[String]()
  val reads = new ConcurrentLinkedQueue[(String, Long, Int)]()
  val wholeReads = new ConcurrentLinkedQueue[String]()

  def clear(): Unit = { opened.clear(); reads.clear(); wholeReads.clear() }
  // Copies taken now (Scala 2.12's toSeq would be a lazy Stream over the live queue).
  def openedPaths: Seq[String] = opened.asScala.toVector
  def rangedReads: Seq[(String, Long, Int)] = reads.asScala.toVector

  override def exists(path: String): Boolean = inner.exists(path)
  override def isDirectory(path: String): Boolean = inner.isDirectory(path)
  override def list(dir: String): Seq[FileEntry] = inner.list(dir)
  override def size(path: String): Long = inner.size(path)
  override def readFully(path: String): Array[Byte] = {
    wholeReads.add(path); inner.readFully(path)
  }
  override def readRange(path: String, offset: Long, length: Int): Array[Byte] = {
    reads.add((path, offset, length)); inner.readRange(path, offset, length)
  }
  override def open(path: String): RandomAccessInput = {
    opened.add(path)
    val in = inner.open(path)
    new RandomAccessInput {
      def path: String = in.path
      def length: Long = in.length
      def read(offset: Long, length: Int): Array[Byte] = {
        reads.add((path, offset, length)); in.read(offset, length)
      }
      def readInto(offset: Long, dst: Array[Byte], dstOffset: Int, length: Int): Unit = {
        reads.add((path, offset, length)); in.readInto(offset, dst, dstOffset, length)
      }
      def close(): Unit = in.close()
    }
  }
  override def createIfAbsent(path: String, bytes: Array[Byte]): Boolean =
    inner.createIfAbsent(path, bytes)
  override def write(path: String, bytes: Array[Byte]): Unit = inner.write(path, bytes)
  override def create(path: String): java.io.OutputStream = inner.create(path)
  override def delete(path: String): Boolean = inner.delete(path)
}
