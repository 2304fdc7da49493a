package io.sparklance.table

/** A named pointer to a version, stored as `_refs/tags/{name}.json`. */
final case class Tag(name: String, version: Long, branch: Option[String])
