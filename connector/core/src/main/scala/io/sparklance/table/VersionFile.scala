package io.sparklance.table

/** One committed version: its number and where its manifest lives. */
final case class VersionFile(version: Long, naming: ManifestNaming, path: String)
