package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.proto.FileProtos
import io.sparklance.proto.TransactionProtos.Transaction

/**
 * Lance `Project`: a new schema over the same data — what pylance's `drop_columns` and
 * `alter_columns` (rename, nullability) commit. Data files none of whose fields remain are
 * dropped from their fragments; indices on dropped fields go with them (`SchemaEdits` makes
 * the field lists). The schema metadata is kept, as pylance keeps it.
 *
 * Conflicts (pylance's `check_project_txn`): another schema change committed first (Merge,
 * Project) is retryable — the schema must be made again from the newer one; an Overwrite or
 * Restore is incompatible; every other operation leaves the schema alone and is rebased over.
 */
final case class Project(fields: Seq[FileProtos.Field]) extends Operation {
  override def name: String = "Project"

  override def writeTo(t: Transaction.Builder): Unit =
    t.setProject(Transaction.Project.newBuilder().addAllSchema(fields.asJava)
      .setPreservesNullability(true))

  override def applyTo(m: ManifestBuilder): Operation = {
    val b = m.manifest
    b.clearFields().addAllFields(fields.asJava)
    val ids = fields.map(_.getId).toSet
    b.getFragmentsBuilderList.asScala.foreach { f =>
      val files = f.getFilesList.asScala.toSeq
      val kept = files.filter(_.getFieldsList.asScala.exists(id => ids(id.intValue)))
      if (kept.size != files.size) f.clearFiles().addAllFiles(kept.asJava)
    }
    this
  }

  override def conflictRow: ConflictRow = ConflictRow.Project

  override def keepsIndices: Boolean = true

  override def changesSchema: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
