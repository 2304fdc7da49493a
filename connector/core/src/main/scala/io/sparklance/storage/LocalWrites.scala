package io.sparklance.storage

import java.io.{BufferedOutputStream, OutputStream}
import java.nio.file.{FileAlreadyExistsException, FileSystems, Files, Path, StandardOpenOption}
import java.nio.file.attribute.PosixFilePermission

import org.apache.hadoop.fs.ParentNotDirectoryException

/**
 * Writes to local disk through `java.nio`, for paths whose Hadoop file system is the plain
 * local one ([[HadoopFileIO]] hands them here).
 *
 * Hadoop's `RawLocalFileSystem` sets the permission of every file and directory it creates,
 * and without Hadoop's native library (a pip-installed Spark has none) it does so by running
 * `chmod` in a child process: one fork of the JVM for each data file, manifest, transaction
 * file and new directory, a few milliseconds each — about a third of a small write's time.
 * Here the same modes are set with one `chmod` system call each: Hadoop's defaults (0666 for
 * a file, 0777 for each directory created) less `umask`, its `fs.permissions.umask-mode`.
 *
 * The semantics are those of the Hadoop calls they replace: parent directories are created,
 * [[create]] fails when the file exists (`FileAlreadyExistsException`), [[write]] replaces,
 * and [[createIfAbsent]] publishes a fully written temporary file with a hard link, which
 * never replaces an existing file, so exactly one of several racing writers wins.
 */
final class LocalWrites(umask: Int) {
  import LocalWrites._

  def create(file: Path): OutputStream = {
    parents(file)
    val out = Files.newOutputStream(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
    try chmod(file, FileMode)
    catch { case e: Throwable => out.close(); throw e }
    new BufferedOutputStream(out, BufferSize)
  }

  def write(file: Path, bytes: Array[Byte]): Unit = {
    parents(file)
    Files.write(file, bytes)
    chmod(file, FileMode)
  }

  def createIfAbsent(file: Path, bytes: Array[Byte]): Boolean = {
    if (Files.exists(file)) return false
    parents(file)
    val tmp = file.resolveSibling(s".tmp-${file.getFileName}-${java.util.UUID.randomUUID()}")
    try {
      Files.write(tmp, bytes, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)
      chmod(tmp, FileMode)
      try { Files.createLink(file, tmp); true }
      catch { case _: FileAlreadyExistsException => false }
    } finally Files.deleteIfExists(tmp)
  }

  /**
   * Creates the missing directories above `file`, top down, each with Hadoop's mode. A file
   * where a directory must be is Hadoop's `ParentNotDirectoryException`, naming both.
   */
  private def parents(file: Path): Unit = {
    val dir = file.getParent
    if (dir == null || Files.isDirectory(dir)) return
    var missing = List(dir)
    var up = dir.getParent
    while (up != null && !Files.isDirectory(up)) { missing ::= up; up = up.getParent }
    missing.foreach { d =>
      val made =
        try { Files.createDirectory(d); true }
        catch {
          case _: FileAlreadyExistsException if Files.isDirectory(d) => false
          case _: FileAlreadyExistsException =>
            throw new ParentNotDirectoryException(
              s"Cannot create $file: $d is a file, not a directory"
            )
        }
      if (made) chmod(d, DirMode)
    }
  }

  private def chmod(p: Path, mode: Int): Unit =
    if (Posix) Files.setPosixFilePermissions(p, permissions(mode & ~umask))
}

object LocalWrites {

  /** Output buffer of [[LocalWrites.create]]'s stream; large writes (pages) pass through. */
  private val BufferSize = 64 * 1024
  private val FileMode = Integer.parseInt("666", 8)
  private val DirMode = Integer.parseInt("777", 8)
  private val Posix = FileSystems.getDefault.supportedFileAttributeViews.contains("posix")

  /** The permissions of a mode's low nine bits (owner, group, others; read, write, execute). */
  def permissions(mode: Int): java.util.Set[PosixFilePermission] = {
    val set = java.util.EnumSet.noneOf(classOf[PosixFilePermission])
    // PosixFilePermission lists OWNER_READ first, the mode's bit 8, down to OTHERS_EXECUTE.
    PosixFilePermission.values.zipWithIndex.foreach { case (perm, i) =>
      if ((mode >> (8 - i) & 1) == 1) set.add(perm)
    }
    set
  }
}
