package io.sparklance.table.index

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * `storage_metadata`, the schema metadata entry of a vector index's `auxiliary.idx` that
 * describes its quantizer (SQ `bounds`; PQ `num_sub_vectors`, `nbits`, `transposed`,
 * `codebook_position`; RaBitQ `packed`): as pylance 14 writes it, a JSON array of JSON texts,
 * one per storage (an entry may also be a JSON object). The one reader of it, for search and
 * for remapping.
 */
object StorageMetadata {
  val Key = "storage_metadata"
  private val json = new ObjectMapper()

  /** The entries of a file's `storage_metadata` (none when missing or not JSON). */
  def entries(metadata: Map[String, String]): Seq[JsonNode] =
    metadata.get(Key).toSeq.flatMap { text =>
      scala.util.Try {
        val outer = json.readTree(text)
        val items = if (outer.isArray) outer.elements().asScala.toSeq else Seq(outer)
        items.map(e => if (e.isTextual) json.readTree(e.asText) else e)
      }.getOrElse(Seq.empty)
    }

  /** The first entry: the storage of an index with one. */
  def first(metadata: Map[String, String]): Option[JsonNode] = entries(metadata).headOption

  /** Whether an entry sets the boolean `flag`. */
  def flag(metadata: Map[String, String], flag: String): Boolean =
    entries(metadata).exists(_.path(flag).asBoolean(false))
}
