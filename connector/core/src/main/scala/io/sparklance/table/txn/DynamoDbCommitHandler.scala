package io.sparklance.table.txn

import java.io.FileNotFoundException
import java.util.UUID

import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.storage.s3.S3Location
import io.sparklance.table.ManifestNaming

/**
 * Commits through pylance's DynamoDB external manifest store, for object stores without
 * conditional writes (`s3+ddb://bucket/path?ddbTableName=t`), in pylance's steps:
 *  1. the manifest is written under a unique staging name, `{final name}-{uuid}`;
 *  2. a conditional put records that staging key as the version in DynamoDB: one writer wins;
 *  3. the winner (or any writer that finds a version still staged) copies it to its final
 *     name, points the row there and deletes the staging object.
 * A put whose answer was lost and that then finds the version taken reads the row back: if
 * it names our staging key, the commit is ours (exactly once).
 */
final class DynamoDbCommitHandler(fileIO: FileIO, root: String, store: DynamoDbManifestStore)
    extends CommitHandler {
  import DynamoDbCommitHandler.log

  private val rootLocation = S3Location(Paths.stripTrailingSlash(root))

  /** The dataset's key in its bucket: pylance's `base_uri`. */
  val baseUri: String = rootLocation.key.stripSuffix("/")

  private def url(key: String): String =
    s"${rootLocation.scheme}://${rootLocation.bucket}/$key"

  override def commit(path: String, bytes: Array[Byte]): Boolean = {
    val name = path.substring(path.lastIndexOf('/') + 1)
    val version = ManifestNaming.parse(name).map(_._1).getOrElse(
      throw LanceErrors.unsupported(s"not a manifest name: $path")
    )
    val staging = s"$path-${UUID.randomUUID()}"
    val stagingKey = S3Location(staging).key
    fileIO.write(staging, bytes)
    // Taken: the row says by whom (our own put, if its answer was lost and it was retried).
    val put = store.putIfNotExists(baseUri, version, stagingKey, bytes.length)
    val recorded = if (put) None else store.get(baseUri, version)
    if (put || recorded.exists(_.path == stagingKey)) {
      finish(ManifestRecord(version, stagingKey, Some(bytes.length.toLong)), Some(bytes))
      true
    } else {
      fileIO.delete(staging)
      // Help the winner: its version may still be staged (a writer stopped between steps).
      recorded.filter(_.staged).foreach(r => finish(r, None))
      false
    }
  }

  /**
   * Step 3 for a version recorded at a staging key: its bytes at the final name (written
   * again if another writer already did: the same bytes), the row pointed there, staging
   * deleted. Once the final object is there the version is committed; the rest is tidying
   * that any later writer or reader can redo, so its failures are only logged. `known` holds
   * the manifest's bytes when the version is our own commit; None when we are finishing a
   * version another writer left staged.
   */
  def finish(record: ManifestRecord, known: Option[Array[Byte]]): Unit = {
    val finalKey = record.path.substring(0, record.path.lastIndexOf(".manifest") + 9)
    val staging = url(record.path)
    val target = url(finalKey)
    val bytes = known.orElse(try Some(fileIO.readFully(staging))
    catch {
      case _: FileNotFoundException => None
    })
    bytes match {
      case Some(b) => fileIO.write(target, b)
      case None =>
        // Another writer finished and removed the staging copy: the final one must be there.
        val there =
          try Some(fileIO.size(target))
          catch { case _: FileNotFoundException => None }
        if (there.isEmpty || record.size.exists(_ != there.get)) {
          val found = there.fold("does not exist")(n => s"has $n bytes, not ${record.size.get}")
          throw LanceErrors.unsupported(s"Version ${record.version} of $root is recorded in " +
            s"DynamoDB table ${store.tableName} at $staging, which is gone, and $target $found")
        }
    }
    val size = bytes.map(_.length.toLong).orElse(record.size).getOrElse(fileIO.size(target))
    try {
      if (!store.putIfExists(baseUri, record.version, finalKey, size))
        log.warn(s"DynamoDB table ${store.tableName} lost the row of version " +
          s"${record.version} of $root while it was being finished")
      else fileIO.delete(staging)
    } catch {
      case e: java.io.IOException =>
        log.warn(s"Version ${record.version} of $root is committed at $target, but its " +
          s"DynamoDB row still names $staging: ${e.getMessage}")
    }
    if (known.isDefined)
      log.info(s"Version ${record.version} of $root committed through DynamoDB table " +
        store.tableName)
    else
      log.info(s"Finished version ${record.version} of $root that another writer left " +
        s"staged at $staging: now at $target (DynamoDB table ${store.tableName})")
  }
}

object DynamoDbCommitHandler {
  private val log = LoggerFactory.getLogger(classOf[DynamoDbCommitHandler])

  val Scheme = "s3+ddb"
}
