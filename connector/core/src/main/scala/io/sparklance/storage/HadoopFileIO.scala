package io.sparklance.storage

import java.io.{EOFException, FileNotFoundException, IOException}

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FSDataInputStream, FileAlreadyExistsException, FileSystem, Path}
import org.apache.hadoop.fs.permission.FsPermission

import io.sparklance.LanceErrors

/**
 * FileIO over Hadoop's FileSystem API, so `file:`, `hdfs:` and any scheme Hadoop knows work
 * with the user's Hadoop configuration (S3 goes to [[io.sparklance.storage.s3.S3FileIO]]
 * instead, see [[RoutingFileIO]]). The configuration travels as a [[SerializableConf]]:
 * Hadoop's Configuration is Writable, not Serializable.
 */
final class HadoopFileIO(conf0: Configuration) extends FileIO {
  private val settings = new SerializableConf(conf0)
  private def conf: Configuration = settings.value

  /**
   * The file system of `p`. A scheme whose file system class Hadoop knows by name but cannot
   * load (Hadoop 3.5 maps `gs` to a class Spark does not ship) is the same situation as an
   * unknown scheme, so it is reported as Hadoop reports that: UnsupportedFileSystemException.
   */
  private def fs(p: Path): FileSystem =
    try p.getFileSystem(conf)
    catch {
      case e: RuntimeException if e.getCause.isInstanceOf[ClassNotFoundException] =>
        val u = new org.apache.hadoop.fs.UnsupportedFileSystemException(
          s"No FileSystem for scheme '${p.toUri.getScheme}': ${e.getCause.getMessage}"
        )
        u.initCause(e)
        throw u
    }

  /** Where files are written: the local file system's raw form, so no `.crc` side files appear
   *  next to manifests and hints (pylance never writes them, and readers ignore them). */
  private def writeFs(p: Path): FileSystem = HadoopFileIO.withoutChecksums(fs(p))

  override def exists(path: String): Boolean = {
    val p = new Path(path)
    IoStats.request(0)
    fs(p).exists(p)
  }

  override def isDirectory(path: String): Boolean = {
    val p = new Path(path)
    IoStats.request(0)
    try fs(p).getFileStatus(p).isDirectory
    catch { case _: FileNotFoundException => false }
  }

  override def list(dir: String): Seq[FileEntry] = {
    val p = new Path(dir)
    IoStats.request(0)
    val statuses =
      try fs(p).listStatus(p)
      catch { case _: FileNotFoundException => Array.empty[org.apache.hadoop.fs.FileStatus] }
    statuses.toSeq.map { s =>
      FileEntry(
        s.getPath.toString,
        s.getPath.getName,
        s.getLen,
        s.isDirectory,
        s.getModificationTime
      )
    }
  }

  override def size(path: String): Long = {
    val p = new Path(path)
    IoStats.request(0)
    fs(p).getFileStatus(p).getLen
  }

  override def readFully(path: String): Array[Byte] = {
    val in = open(path)
    try {
      if (in.length > Int.MaxValue - 16)
        throw new IOException(s"File too large to read whole: $path")
      in.read(0, in.length.toInt)
    } finally in.close()
  }

  override def readRange(path: String, offset: Long, length: Int): Array[Byte] = {
    val in = open(path)
    try in.read(offset, length)
    finally in.close()
  }

  override def open(path: String): RandomAccessInput = {
    val p = new Path(path)
    val f = fs(p)
    IoStats.request(0)
    val len = f.getFileStatus(p).getLen
    new HadoopInput(path, len, f.open(p), null)
  }

  /** No status call: the stream is opened on the first read. */
  override def openSized(path: String, size: Long): RandomAccessInput = {
    val p = new Path(path)
    new HadoopInput(path, size, null, () => fs(p).open(p))
  }

  override def createIfAbsent(path: String, bytes: Array[Byte]): Boolean = {
    val target = new Path(path)
    val f = writeFs(target)
    localFile(f, target) match {
      case Some(file) => local(f).createIfAbsent(file, bytes)
      case None =>
        // Write a private temporary file, then move it into place with Hadoop's rename,
        // which fails on HDFS when the target exists, so exactly one of several racing
        // writers wins (on local disks LocalWrites links instead: a local rename replaces).
        if (f.exists(target)) return false
        val tmp =
          new Path(target.getParent, s".tmp-${target.getName}-${java.util.UUID.randomUUID()}")
        val out = f.create(tmp, false)
        try out.write(bytes)
        finally out.close()
        try {
          try f.rename(tmp, target)
          catch { case _: FileAlreadyExistsException => false }
        } finally {
          if (f.exists(tmp)) f.delete(tmp, false)
        }
    }
  }

  /**
   * `p` as a local file when its file system is the local one: such writes go through
   * [[LocalWrites]], which sets modes without the child process Hadoop's local file system
   * runs for each file and directory it creates.
   */
  private def localFile(f: FileSystem, p: Path): Option[java.nio.file.Path] =
    if (f.getUri.getScheme == "file") Some(java.nio.file.Paths.get(f.makeQualified(p).toUri))
    else None

  /** With the umask of `f`'s own configuration, as Hadoop's local file system applies it. */
  private def local(f: FileSystem): LocalWrites =
    new LocalWrites(FsPermission.getUMask(f.getConf).toShort.toInt)

  override def write(path: String, bytes: Array[Byte]): Unit = {
    val p = new Path(path)
    val f = writeFs(p)
    localFile(f, p) match {
      case Some(file) => local(f).write(file, bytes)
      case None =>
        val out = f.create(p, true)
        try out.write(bytes)
        finally out.close()
    }
  }

  override def create(path: String): java.io.OutputStream = {
    val p = new Path(path)
    val f = writeFs(p)
    localFile(f, p) match {
      case Some(file) => local(f).create(file)
      case None => f.create(p, false)
    }
  }

  override def delete(path: String): Boolean = { val p = new Path(path); fs(p).delete(p, false) }

  /** Hadoop's rename: one step on local and HDFS file systems; refused for S3A (a copy). */
  override def renameDirectory(from: String, to: String): Boolean = {
    val (f, t) = (new Path(from), new Path(to))
    val store = fs(f)
    if (HadoopFileIO.copiesOnRename(store.getScheme)) false
    else !store.exists(t) && store.getFileStatus(f).isDirectory && store.rename(f, t)
  }
}

object HadoopFileIO {
  def local(): HadoopFileIO = new HadoopFileIO(new Configuration())

  /** Object-store file systems whose rename copies every file, then deletes. */
  private def copiesOnRename(scheme: String): Boolean =
    Set("s3a", "s3n", "s3", "gs", "wasb", "wasbs", "abfs", "abfss", "oss", "cos", "cosn")(
      Option(scheme).getOrElse("").toLowerCase
    )

  /** The raw file system under Hadoop's checksumming local one; any other file system as is. */
  def withoutChecksums(f: FileSystem): FileSystem = f match {
    case c: org.apache.hadoop.fs.LocalFileSystem => c.getRawFileSystem
    case other => other
  }
}

/**
 * Positioned reads of one Hadoop file through stream `in`, or, when that is null, the stream
 * `openStream` gives on the first read.
 */
private final class HadoopInput(
    val path: String,
    val length: Long,
    private var in: FSDataInputStream,
    openStream: () => FSDataInputStream
) extends RandomAccessInput {

  override def read(offset: Long, len: Int): Array[Byte] = {
    val buf = new Array[Byte](len)
    readInto(offset, buf, 0, len)
    buf
  }

  override def readInto(offset: Long, dst: Array[Byte], dstOffset: Int, len: Int): Unit = {
    if (offset < 0 || len < 0 || offset + len > length)
      throw LanceErrors.corruptFile(
        path,
        s"read of $len bytes at offset $offset is outside the file (size $length bytes)"
      )
    IoStats.request(len)
    if (in == null) in = openStream()
    try in.readFully(offset, dst, dstOffset, len)
    catch {
      case e: EOFException => throw LanceErrors.corruptFile(
          path,
          s"unexpected end of file reading $len bytes at $offset",
          e
        )
    }
  }

  override def close(): Unit = if (in != null) in.close()
}
