package io.sparklance.table

import com.fasterxml.jackson.databind.ObjectMapper

import io.sparklance.LanceErrors
import io.sparklance.storage.{FileIO, Paths}

/** A named pointer to a version, stored as `_refs/tags/{name}.json`. */
final case class Tag(name: String, version: Long, branch: Option[String])
