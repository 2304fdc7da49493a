package io.sparklance.format.blob

/**
 * Where the bytes of a blob v2 value live (`kind` of its descriptor), as pylance 14.0.2 writes
 * them (`lance_core::datatypes::BlobKind`):
 *
 *  - Inline (0): `[position, +size)` of the row's own data file.
 *  - Packed (1): `[position, +size)` of the shared sidecar file `blob_id` (see [[BlobPaths.sidecar]]).
 *  - Dedicated (2): the whole sidecar file `blob_id`; position 0, size its length.
 *  - External (3): `[position, +size)` of `blob_uri`: an absolute URI when `blob_id` is 0, else a
 *    path relative to the manifest's base path `blob_id`. Size 0 means "to the end of the object".
 *  - Managed (4): `[position, +size)` of `blob_uri`, relative to the row's data-file base (the
 *    dataset root, or the data file's base path); size 0 is an empty value.
 *  - ManagedWithBase (5): the same, relative to the base path `blob_id`.
 */
object BlobKind {
  val Inline: Byte = 0
  val Packed: Byte = 1
  val Dedicated: Byte = 2
  val External: Byte = 3
  val Managed: Byte = 4
  val ManagedWithBase: Byte = 5

  def name(k: Int): String = k match {
    case 0 => "inline"
    case 1 => "packed"
    case 2 => "dedicated"
    case 3 => "external"
    case 4 => "managed"
    case 5 => "managed-with-base"
    case other => s"unknown ($other)"
  }
}
