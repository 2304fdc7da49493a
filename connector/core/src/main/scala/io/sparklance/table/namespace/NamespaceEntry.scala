package io.sparklance.table.namespace

import io.sparklance.format._

/** One row of a directory namespace's `__manifest` table. */
final case class NamespaceEntry(
    objectId: String,
    objectType: String,
    location: Option[String],
    metadata: Option[String] = None,
    baseObjects: Option[Seq[String]] = None
) {
  def isTable: Boolean = objectType == NamespaceEntry.Table
  def isNamespace: Boolean = objectType == NamespaceEntry.Namespace
  def id: Seq[String] =
    objectId.split(java.util.regex.Pattern.quote(DirectoryNamespace.Delimiter), -1).toSeq
}
object NamespaceEntry {
  val Table = "table"
  val Namespace = "namespace"
}
