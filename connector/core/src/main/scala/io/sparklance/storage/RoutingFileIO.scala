package io.sparklance.storage

import org.apache.hadoop.conf.Configuration

import io.sparklance.storage.s3.{S3Config, S3FileIO}

/**
 * The FileIO the connector uses: each path goes to the store its scheme names — `s3://` and
 * `s3a://` to [[S3FileIO]] (conditional-PUT commits; Hadoop's S3A can only commit by a
 * copy that two writers can both win), everything else to Hadoop's FileSystem API.
 * The S3 settings are read from the same configuration (see [[S3Config]]).
 */
final class RoutingFileIO(conf0: Configuration) extends FileIO {
  private val settings = new SerializableConf(conf0)
  private def conf: Configuration = settings.value
  @transient private lazy val hadoop = new HadoopFileIO(conf)
  @transient private lazy val s3 = new S3FileIO(S3Config.from(conf))

  /** A setting of the configuration (reader/writer options are in it too). */
  def setting(key: String): Option[String] = Option(conf.get(key))

  /** The S3 (and DynamoDB) settings of this configuration. */
  def s3Config: S3Config = s3.config

  private def of(path: String): FileIO = {
    val i = path.indexOf("://")
    if (i > 0 && S3FileIO.Schemes.contains(path.substring(0, i).toLowerCase(java.util.Locale.ROOT)))
      s3
    else hadoop
  }

  override def exists(path: String): Boolean = of(path).exists(path)
  override def isDirectory(path: String): Boolean = of(path).isDirectory(path)
  override def list(dir: String): Seq[FileEntry] = of(dir).list(dir)
  override def size(path: String): Long = of(path).size(path)
  override def readFully(path: String): Array[Byte] = of(path).readFully(path)
  override def readRange(path: String, offset: Long, length: Int): Array[Byte] =
    of(path).readRange(path, offset, length)
  override def open(path: String): RandomAccessInput = of(path).open(path)
  override def openSized(path: String, size: Long): RandomAccessInput =
    of(path).openSized(path, size)
  override def createIfAbsent(path: String, bytes: Array[Byte]): Boolean =
    of(path).createIfAbsent(path, bytes)
  override def write(path: String, bytes: Array[Byte]): Unit = of(path).write(path, bytes)
  override def create(path: String): java.io.OutputStream = of(path).create(path)
  override def delete(path: String): Boolean = of(path).delete(path)
  override def renameDirectory(from: String, to: String): Boolean =
    (of(from) eq of(to)) && of(from).renameDirectory(from, to)
}
