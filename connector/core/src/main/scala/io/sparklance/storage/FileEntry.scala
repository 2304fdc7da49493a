package io.sparklance.storage

/** One entry of a directory listing. `name` is the last path component. */
final case class FileEntry(
    path: String,
    name: String,
    size: Long,
    isDirectory: Boolean,
    modificationTime: Long
)
