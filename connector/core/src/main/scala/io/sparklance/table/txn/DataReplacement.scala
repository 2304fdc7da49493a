package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos
import io.sparklance.proto.TransactionProtos.Transaction

/**
 * Lance `DataReplacement`: new data files for the same columns of some fragments, every
 * file holding the same fields (Lance requires it). In each fragment the new file takes the
 * place of the data file with exactly those fields and file version, or, when no file of the
 * fragment holds any of them (a column added without values, all null), joins the fragment —
 * Lance's "null column population". A fragment it changes neither way is an error, as in
 * Lance. Rows, row ids and the schema stay; the index section carries over; the rows of a
 * replaced fragment get this version as their last-updated one.
 *
 * Conflicts, as pylance 14 resolves them (found pair by pair in TransactionMatrixSuite):
 * incompatible with a Delete or Update that removed a replaced fragment whole, a Project that
 * dropped a replaced field, an Overwrite or a Restore; retryable over any Merge, an Update or
 * Rewrite of a replaced fragment, a DataReplacement of the same fields of the same fragment,
 * and a CreateIndex of a replaced field; rebased over everything else (Append, a Delete that
 * keeps the fragment, UpdateConfig, ReserveFragments, changes to other fragments or fields).
 */
final case class DataReplacement(replacements: Seq[(Long, TableProtos.DataFile)])
    extends Operation {
  override def name: String = "DataReplacement"

  private def fields: Seq[Int] =
    replacements.headOption.toSeq.flatMap(_._2.getFieldsList.asScala.map(_.intValue))

  override def writeTo(t: Transaction.Builder): Unit =
    t.setDataReplacement(Transaction.DataReplacement.newBuilder().addAllReplacements(
      replacements.map { case (id, f) =>
        Transaction.DataReplacementGroup.newBuilder().setFragmentId(id).setNewFile(f).build()
      }.asJava
    ))

  override def applyTo(m: ManifestBuilder): Operation = {
    val fieldSets = replacements.map(_._2.getFieldsList.asScala.toSeq).distinct
    if (fieldSets.size > 1) {
      val sets = fieldSets.map(_.mkString("[", ",", "]")).mkString(", ")
      throw LanceErrors.unsupported(s"A DataReplacement of ${m.root} must give every fragment " +
        s"a file of the same fields, not $sets")
    }
    val byId = replacements.toMap
    val ids = fields.toSet
    val b = m.manifest
    b.getFragmentsBuilderList.asScala.filter(f => byId.contains(f.getId)).foreach { f =>
      val next = byId(f.getId)
      val files = f.getFilesBuilderList.asScala
      val same = files.filter(d =>
        d.getFieldsList.asScala.map(_.intValue) == fields &&
          d.getFileMajorVersion == next.getFileMajorVersion &&
          d.getFileMinorVersion == next.getFileMinorVersion
      )
      val covered = files.exists(_.getFieldsList.asScala.exists(id => ids(id.intValue)))
      if (same.nonEmpty) same.foreach { d =>
        d.setPath(next.getPath).setFileSizeBytes(next.getFileSizeBytes)
        if (next.hasBaseId) d.setBaseId(next.getBaseId) else d.clearBaseId()
      }
      else if (!covered) f.addFiles(next)
      else throw LanceErrors.unsupported(s"A DataReplacement of ${m.root} cannot replace " +
        s"fields ${fields.mkString(", ")} of fragment ${f.getId}: its data files hold them " +
        "with other fields or in another file version")
    }
    // Every row of a replaced fragment was rewritten in those columns: with stable row ids its
    // last-updated version becomes this one, as pylance 14 records it.
    b.getFragmentsBuilderList.asScala.filter(f => byId.contains(f.getId)).foreach { f =>
      val rewritten = m.updatedAll(f.build())
      if (rewritten.hasInlineLastUpdatedAtVersions)
        f.setInlineLastUpdatedAtVersions(rewritten.getInlineLastUpdatedAtVersions)
    }
    val missing = byId.keySet -- b.getFragmentsList.asScala.map(_.getId)
    if (missing.nonEmpty)
      throw LanceErrors.concurrentModification(
        m.root,
        m.readVersion,
        s"fragment(s) " +
          s"${missing.toSeq.sorted.mkString(", ")} this DataReplacement replaces are gone",
        retryable = false
      )
    this
  }

  override def conflictRow: ConflictRow = ConflictRow.DataReplacement

  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution = {
    val mine = replacements.map(_._1).toSet
    def retryIf(hit: Boolean) =
      if (!hit) Resolution.Rebase
      else Resolution.Retryable(s"the ${c.operationName} changed data this DataReplacement " +
        "replaces")
    val removed = (c.removedFragmentIds & mine).toSeq.sorted
    if (removed.nonEmpty) Resolution.Incompatible(s"the ${c.operationName} removed fragment(s) " +
      s"${removed.mkString(", ")} this DataReplacement replaces")
    else kind match {
      case OperationKind.Delete => Resolution.Rebase
      case OperationKind.CreateIndex =>
        val indexed = c.txn.get.getCreateIndex.getNewIndicesList.asScala
          .flatMap(_.getFieldsList.asScala.map(_.intValue)).toSet
        retryIf(fields.exists(indexed))
      case OperationKind.Update => retryIf((c.updatedFragmentIds & mine).nonEmpty)
      case OperationKind.Rewrite => retryIf((c.rewrittenFragmentIds & mine).nonEmpty)
      case OperationKind.DataReplacement =>
        retryIf(c.txn.get.getDataReplacement.getReplacementsList.asScala.exists { g =>
          mine(g.getFragmentId) && g.getNewFile.getFieldsList.asScala.exists(f =>
            fields
              .contains(f.intValue)
          )
        })
      case OperationKind.Project =>
        val kept = c.txn.get.getProject.getSchemaList.asScala.map(_.getId).toSet
        val dropped = fields.filterNot(kept)
        if (dropped.isEmpty) Resolution.Rebase
        else Resolution.Incompatible(s"the ${c.operationName} dropped field(s) " +
          s"${dropped.mkString(", ")} this DataReplacement replaces")
      case other => ConflictTable.noRule(this, other)
    }
  }

  override def keepsIndices: Boolean = true
}
