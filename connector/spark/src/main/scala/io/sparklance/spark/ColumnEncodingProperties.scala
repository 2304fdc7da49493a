package io.sparklance.spark

import org.apache.spark.sql.types.{MetadataBuilder, StructType}

import io.sparklance.LanceErrors
import io.sparklance.format.LanceSchema

/**
 * Per-column encodings as table properties: `lance.encoding.<column>.<key>` is the top-level
 * column's Lance field metadata `lance-encoding:<key>` (what pylance takes from Arrow field
 * metadata, e.g. `lance.encoding.v.compression` = `zstd`). A CREATE TABLE (or CTAS, or a
 * write option of a new dataset) sets them; DESCRIBE, SHOW TBLPROPERTIES and SHOW CREATE TABLE
 * show them. They are never table config, and the encodings of written data cannot change.
 */
object ColumnEncodingProperties {
  val Prefix = "lance.encoding."

  def isEncodingKey(k: String): Boolean = k.toLowerCase(java.util.Locale.ROOT).startsWith(Prefix)

  /** The properties naming the top-level columns' encodings of `schema`. */
  def of(schema: LanceSchema): Map[String, String] = schema.fields.flatMap { f =>
    f.metadata.keys.toSeq.filter(_.startsWith(SchemaConverter.EncodingKeyPrefix)).map { k =>
      s"$Prefix${f.name}.${k.stripPrefix(SchemaConverter.EncodingKeyPrefix)}" ->
        f.metadataString(k).getOrElse("")
    }
  }.toMap

  /** `schema` with the encodings `properties` name in its columns' metadata. */
  def applyTo(schema: StructType, properties: Map[String, String], table: String): StructType = {
    val named = properties.toSeq.collect {
      case (k, v) if isEncodingKey(k) =>
        val rest = k.substring(Prefix.length)
        val i = rest.indexOf('.')
        if (i <= 0 || i == rest.length - 1)
          throw LanceErrors.invalidOption(
            k,
            v,
            "expected lance.encoding.<column>.<key>, e.g. " +
              "lance.encoding.v.compression"
          )
        val column = rest.substring(0, i)
        if (!schema.fieldNames.contains(column))
          throw LanceErrors.invalidOption(
            k,
            v,
            s"no column '$column' in $table; the columns " +
              s"are ${schema.fieldNames.mkString(", ")}"
          )
        (column, rest.substring(i + 1), v)
    }
    if (named.isEmpty) schema
    else StructType(schema.fields.map { f =>
      val mine = named.filter(_._1 == f.name)
      if (mine.isEmpty) f
      else {
        val b = new MetadataBuilder().withMetadata(f.metadata)
        mine.foreach { case (_, key, v) => b.putString(SchemaConverter.EncodingKeyPrefix + key, v) }
        f.copy(metadata = b.build())
      }
    })
  }
}
