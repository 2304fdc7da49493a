package io.sparklance.table.txn

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, RoutingFileIO}
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
  /** DynamoDB tables whose key schema was checked (once per table, as pylance does). */
  private val checkedTables = java.util.concurrent.ConcurrentHashMap.newKeySet[String]()

  /**
   * The handler for where `root` lives: local files (hard link), `s3+ddb://` (pylance's
   * DynamoDB external manifest store), anything else the store's own create-if-absent (S3's
   * conditional PUT, HDFS's never-replacing rename).
   */
  def forRoot(fileIO: FileIO, root: String): CommitHandler = {
    val i = root.indexOf("://")
    val scheme = if (i > 0) root.substring(0, i).toLowerCase(java.util.Locale.ROOT) else "file"
    if (scheme == "file") new LocalCommitHandler(fileIO)
    else if (scheme == DynamoDbCommitHandler.Scheme) dynamoDb(fileIO, root)
    else new RenameCommitHandler(fileIO)
  }

  private def dynamoDb(fileIO: FileIO, root: String): DynamoDbCommitHandler = {
    val config: S3Config = fileIO match {
      case r: RoutingFileIO => r.s3Config
      case s: S3FileIO => s.config
      case other => throw LanceErrors.unsupported(
        s"$root: s3+ddb:// commits need the connector's S3 storage, not ${other.getClass}")
    }
    val table = config.ddbTableName.getOrElse(throw LanceErrors.invalidOption("ddbTableName",
      "", s"$root commits through DynamoDB: name its table as pylance does " +
        "(s3+ddb://bucket/path?ddbTableName=t) or with the option ddbTableName"))
    val store = new DynamoDbManifestStore(new DynamoDbClient(config), table)
    if (!checkedTables.contains(table)) {
      store.checkTable()
      checkedTables.add(table)
    }
    new DynamoDbCommitHandler(fileIO, root, store)
  }
}
