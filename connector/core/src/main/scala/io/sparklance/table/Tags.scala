package io.sparklance.table

import com.fasterxml.jackson.databind.ObjectMapper

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths}

/** A named pointer to a version, stored as `_refs/tags/{name}.json`. */
final case class Tag(name: String, version: Long, branch: Option[String])

object Tags {
  private val mapper = new ObjectMapper()

  def dir(root: String): String = Paths.join(Paths.join(root, "_refs"), "tags")

  def list(io: FileIO, root: String): Seq[Tag] =
    io.list(dir(root)).filter(e => !e.isDirectory && e.name.endsWith(".json")).map { e =>
      parse(e.name.stripSuffix(".json"), io.readFully(e.path), e.path)
    }.sortBy(_.name)

  def get(io: FileIO, root: String, name: String): Tag = {
    val path = Paths.join(dir(root), s"$name.json")
    if (!io.exists(path)) throw LanceErrors.tagNotFound(root, name, list(io, root).map(_.name))
    parse(name, io.readFully(path), path)
  }

  /** `{"version": N, "manifest_size": M}`, optionally with `"branch"`. */
  private def parse(name: String, bytes: Array[Byte], path: String): Tag = {
    val node = try mapper.readTree(bytes) catch {
      case e: Exception => throw LanceErrors.corruptFile(path, s"tag file is not JSON: ${e.getMessage}", e)
    }
    val v = node.get("version")
    if (v == null || !v.canConvertToLong) throw LanceErrors.corruptFile(path, "tag file has no integer 'version'")
    val branch = Option(node.get("branch")).filterNot(_.isNull).map(_.asText())
    Tag(name, v.asLong(), branch)
  }
}
