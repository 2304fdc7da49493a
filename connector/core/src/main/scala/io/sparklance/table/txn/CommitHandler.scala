package io.sparklance.table.txn

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, ObjectStores, RoutingFileIO}
import io.sparklance.storage.s3.{DynamoDbClient, S3Config, S3FileIO}

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
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[CommitHandler])

  /** DynamoDB tables whose key schema was checked (once per table, as pylance does). */
  private val checkedTables = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /**
   * The handler for where `root` lives: local files (hard link), `s3+ddb://` (pylance's
   * DynamoDB external manifest store), object stores whose Hadoop rename is a copy refused
   * (`ObjectStores.RenameIsCopySchemes`: two writers could both "win" a version) unless the
   * user says the table has one writer ([[UnsafeRenameCommit]]), anything else the store's
   * own create-if-absent (S3's conditional PUT, HDFS's never-replacing rename).
   */
  def forRoot(fileIO: FileIO, root: String): CommitHandler = {
    val scheme = ObjectStores.scheme(root)
    if (scheme == "file") new LocalCommitHandler(fileIO)
    else if (scheme == DynamoDbCommitHandler.Scheme) dynamoDb(fileIO, root)
    else if (ObjectStores.RenameIsCopySchemes.contains(scheme))
      renameOnObjectStore(fileIO, root, scheme)
    else new RenameCommitHandler(fileIO)
  }

  /** The option (or Hadoop setting) that accepts rename commits on such a store. */
  val UnsafeRenameCommit = "unsafe_rename_commit"

  private def renameOnObjectStore(fileIO: FileIO, root: String, scheme: String): CommitHandler = {
    val allowed = fileIO match {
      case r: RoutingFileIO =>
        r.setting(UnsafeRenameCommit).exists(_.trim.equalsIgnoreCase("true"))
      case _ => false
    }
    if (!allowed) throw LanceErrors.unsupported(s"Cannot commit to $root: $scheme:// is " +
      "reached through its Hadoop file system, whose rename is not an exclusive create, so " +
      "two writers could both commit one version and one would be silently lost. Commits " +
      "are safe on local files, HDFS, s3:// (conditional PUT) and s3+ddb:// (DynamoDB). If " +
      s"this table has a single writer, set the option $UnsafeRenameCommit=true to commit by " +
      "rename anyway.")
    log.warn(s"Committing to $root by rename ($UnsafeRenameCommit=true): not safe with " +
      "concurrent writers")
    new RenameCommitHandler(fileIO)
  }

  private def dynamoDb(fileIO: FileIO, root: String): DynamoDbCommitHandler = {
    val config: S3Config = fileIO match {
      case r: RoutingFileIO => r.s3Config
      case s: S3FileIO => s.config
      case other => throw LanceErrors.unsupported(
          s"$root: s3+ddb:// commits need the connector's S3 storage, not ${other.getClass}"
        )
    }
    val table = config.ddbTableName.getOrElse(throw LanceErrors.invalidOption(
      "ddbTableName",
      "",
      s"$root commits through DynamoDB: name its table as pylance does " +
        "(s3+ddb://bucket/path?ddbTableName=t) or with the option ddbTableName"
    ))
    val store = new DynamoDbManifestStore(new DynamoDbClient(config), table)
    if (!checkedTables.contains(table)) {
      store.checkTable()
      checkedTables.add(table)
    }
    new DynamoDbCommitHandler(fileIO, root, store)
  }
}
