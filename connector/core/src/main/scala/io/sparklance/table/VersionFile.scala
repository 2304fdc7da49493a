package io.sparklance.table

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, ObjectStores, Paths}

/** One committed version: its number and where its manifest lives. */
final case class VersionFile(version: Long, naming: ManifestNaming, path: String)
