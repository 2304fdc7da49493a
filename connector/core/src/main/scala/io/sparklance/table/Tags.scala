package io.sparklance.table

import com.fasterxml.jackson.databind.ObjectMapper

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths}

object Tags {
  private val mapper = new ObjectMapper()

  def dir(root: String): String = DatasetLayout.tagsDir(root)

  def list(io: FileIO, root: String): Seq[Tag] =
    io.list(dir(root)).filter(e => !e.isDirectory && e.name.endsWith(".json")).map { e =>
      parse(e.name.stripSuffix(".json"), io.readFully(e.path), e.path)
    }.sortBy(_.name)

  def get(io: FileIO, root: String, name: String): Tag = {
    val path = Paths.join(dir(root), s"$name.json")
    if (!io.exists(path)) throw LanceErrors.tagNotFound(root, name, list(io, root).map(_.name))
    parse(name, io.readFully(path), path)
  }

  /** Why `name` is not a valid tag name (pylance's ref rules), or None. */
  def invalidName(name: String): Option[String] =
    if (name.isEmpty) Some("Ref cannot be empty")
    else if (!name.forall(c => c.isLetterOrDigit && c < 128 || c == '.' || c == '-' || c == '_'))
      Some("Ref characters must be either alphanumeric, '.', '-' or '_'")
    else if (name.startsWith(".")) Some("Ref cannot begin with a dot")
    else if (name.endsWith(".")) Some("Ref cannot end with a dot")
    else if (name.endsWith(".lock")) Some("Ref cannot end with .lock")
    else if (name.contains("..")) Some("Ref cannot have two consecutive dots")
    else None

  private def check(root: String, name: String): Unit = invalidName(name).foreach { why =>
    throw LanceErrors.invalidOption("tag", name, s"not a valid tag name for $root: $why")
  }

  /** The JSON pylance 14 writes for a tag (2-space indent, nanosecond RFC 3339 times). */
  private def json(version: Long, createdAt: String, updatedAt: String, size: Long): Array[Byte] =
    s"""{
       |  "branch": null,
       |  "version": $version,
       |  "createdAt": "$createdAt",
       |  "updatedAt": "$updatedAt",
       |  "manifestSize": $size,
       |  "metadata": {}
       |}""".stripMargin.getBytes("UTF-8")

  private def now(): String = {
    val t = java.time.Instant.now()
    java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.nnnnnnnnn'Z'")
      .withZone(java.time.ZoneOffset.UTC).format(t)
  }

  private def manifestSize(io: FileIO, root: String, version: Long): Long =
    io.size(LanceDataset.open(io, root).open(VersionSpec.Number(version)).manifestPath)

  /** Creates tag `name` on `version` of the main branch; fails if the tag exists. */
  def create(io: FileIO, root: String, name: String, version: Long): Tag = {
    check(root, name)
    val size = manifestSize(io, root, version)
    val stamp = now()
    if (!io.createIfAbsent(Paths.join(dir(root), s"$name.json"), json(version, stamp, stamp, size)))
      throw LanceErrors.invalidOption("tag", name, s"tag $name already exists in $root")
    Tag(name, version, None)
  }

  /** Points existing tag `name` at `version` (its creation time kept). */
  def update(io: FileIO, root: String, name: String, version: Long): Tag = {
    check(root, name)
    val path = Paths.join(dir(root), s"$name.json")
    get(io, root, name)
    val created = Option(mapper.readTree(io.readFully(path)).get("createdAt")).map(_.asText)
      .getOrElse(now())
    io.write(path, json(version, created, now(), manifestSize(io, root, version)))
    Tag(name, version, None)
  }

  /** Deletes tag `name`; the version it named is untouched. */
  def delete(io: FileIO, root: String, name: String): Unit = {
    get(io, root, name)
    io.delete(Paths.join(dir(root), s"$name.json"))
  }

  /** `{"version": N, "manifest_size": M}`, optionally with `"branch"`. */
  private def parse(name: String, bytes: Array[Byte], path: String): Tag = {
    val node =
      try mapper.readTree(bytes)
      catch {
        case e: Exception =>
          throw LanceErrors.corruptFile(path, s"tag file is not JSON: ${e.getMessage}", e)
      }
    val v = node.get("version")
    if (v == null || !v.canConvertToLong)
      throw LanceErrors.corruptFile(path, "tag file has no integer 'version'")
    val branch = Option(node.get("branch")).filterNot(_.isNull).map(_.asText())
    Tag(name, v.asLong(), branch)
  }
}
