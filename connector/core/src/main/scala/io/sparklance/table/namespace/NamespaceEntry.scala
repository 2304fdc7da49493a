package io.sparklance.table.namespace

import java.nio.charset.StandardCharsets.UTF_8

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table.{DatasetLayout, DeletionVector, FragmentReader, FragmentRef, Snapshot}
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}
import io.sparklance.table.txn.{CommitOptions, Committer, Overwrite, WritePlan}

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
