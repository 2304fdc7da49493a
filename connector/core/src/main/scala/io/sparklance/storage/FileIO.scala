package io.sparklance.storage

/**
 * The storage the format and table layers see: whole-file and ranged reads, listings,
 * and the one atomic primitive a Lance commit needs (create-if-absent).
 *
 * Paths are absolute URIs or absolute local paths as strings. Implementations must be
 * serializable: they travel to executors inside input partitions.
 */
trait FileIO extends Serializable {
  def exists(path: String): Boolean
  def isDirectory(path: String): Boolean

  /** Entries directly under `dir`; empty when `dir` does not exist. */
  def list(dir: String): Seq[FileEntry]
  def size(path: String): Long
  def readFully(path: String): Array[Byte]

  /** Exactly `length` bytes at `offset`, or an error naming the file when it is shorter. */
  def readRange(path: String, offset: Long, length: Int): Array[Byte]

  /** A handle for many ranged reads of one file. */
  def open(path: String): RandomAccessInput

  /**
   * A handle for ranged reads of a file known to be `size` bytes (a data file whose size the
   * manifest records and whose metadata is already known): stores that would ask for the size
   * or read ahead on opening need not, and nothing is read until a read.
   */
  def openSized(path: String, size: Long): RandomAccessInput = open(path)

  /** Writes `bytes` to `path` only if nothing is there; false when it already exists. */
  def createIfAbsent(path: String, bytes: Array[Byte]): Boolean

  /** Writes `bytes`, replacing whatever is at `path` (for files nobody else names, e.g. fresh data files). */
  def write(path: String, bytes: Array[Byte]): Unit

  /** A new file at `path` (failing if one exists), written as a stream: data files. */
  def create(path: String): java.io.OutputStream
  def delete(path: String): Boolean

  /**
   * Moves directory `from` to `to` (which must not exist) in one step: false when the store
   * cannot (object stores have no directory rename), or `to` exists, or the move failed.
   */
  def renameDirectory(from: String, to: String): Boolean = false
}
