package io.sparklance.format.blob

import io.sparklance.format.{LanceField, LogicalType}

/**
 * Lance "blob" columns: binary values stored out of line, with the column itself holding only
 * a descriptor per row that says where the bytes are.
 *
 *  - Blob v1 (files 2.0 and 2.1): a `large_binary` field with metadata `lance-encoding:blob`.
 *    The column holds `struct<position: u64, size: u64>`, the bytes live in the same data file
 *    at `[position, position + size)`. Nulls: in 2.0 a null row is `(1, 0)`; in 2.1 the page is
 *    a `BlobLayout` and nulls travel as definition levels smuggled into `position` (size 0,
 *    position = def << 16 | rep). An empty value is `(0, 0)`.
 *  - Blob v2 (files 2.2+): a struct field with extension `lance.blob.v2` (children `data`, `uri`
 *    and optionally `position`, `size`: the *logical* writer input). The column holds a packed
 *    `struct<kind: u8, position: u64, size: u64, blob_id: u32, blob_uri: utf8>`, nulls as struct
 *    validity; `kind` says where the bytes are (see [[BlobKind]]). pylance 14 promotes v1 blob
 *    fields to v2 when it writes 2.2.
 *
 * This object recognises blob fields from their Lance metadata (pylance's `Field::is_blob` /
 * `is_blob_v2`); the file readers then decode such a field to its descriptor struct, in the
 * child order given by [[V1Children]] / [[V2Children]], whatever the file version.
 */
object BlobColumn {
  val BlobMetaKey = "lance-encoding:blob"
  val ExtensionNameKey = "ARROW:extension:name"
  val V2ExtensionName = "lance.blob.v2"

  sealed abstract class Version(val number: Int) extends Serializable
  case object V1 extends Version(1)
  case object V2 extends Version(2)

  /** Children of a decoded v1 descriptor struct: position, size (both u64). */
  val V1Children: Seq[String] = Seq("position", "size")

  /** Children of a decoded v2 descriptor struct: kind (u8), position, size (u64), blob_id (u32), blob_uri (utf8). */
  val V2Children: Seq[String] = Seq("kind", "position", "size", "blob_id", "blob_uri")

  /**
   * The blob version of `f`, or None when it is not a blob column. v2 is the extension name on
   * a struct; v1 is the `lance-encoding:blob` key (any value, as pylance checks only the key)
   * on a binary field. Other fields carrying the key (a v2 descriptor struct in a file's own
   * schema) are not dataset blob columns.
   */
  def version(f: LanceField): Option[Version] =
    if (
      f.metadataString(ExtensionNameKey).contains(
        V2ExtensionName
      ) && f.logicalType == LogicalType.Struct
    ) Some(V2)
    else if (
      f.metadata.contains(BlobMetaKey) &&
      (f.logicalType == LogicalType.LargeBinary || f.logicalType == LogicalType.Binary)
    ) Some(V1)
    else None

  def isBlob(f: LanceField): Boolean = version(f).isDefined

  /** Whether `f` or any field below it is a blob column. */
  def containsBlob(f: LanceField): Boolean = isBlob(f) || f.children.exists(containsBlob)
}
