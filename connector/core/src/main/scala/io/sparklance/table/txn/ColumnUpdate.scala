package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos
import io.sparklance.proto.TransactionProtos.Transaction
import io.sparklance.table.RowIdSequences

/**
 * Lance `Update` in REWRITE_COLUMNS mode (what pylance's `LanceFragment.update_columns`
 * followed by `LanceOperation.Update(update_mode="rewrite_columns")` commits): the updated
 * columns of some fragments written again as one new data file per fragment, every physical
 * row of it, while the rows stay where they are with their row ids and other columns.
 *
 * In each fragment the new file (`files`, all of the same fields `fieldsModified`) joins the
 * fragment and those fields are tombstoned (field id -2) in the files that held them; a file
 * left with tombstones only (an earlier update's file of the same columns) is dropped. With
 * stable row ids the rows that matched (`matched`: physical offsets per fragment) get this
 * version as their last-updated one; pylance records the offsets as portable Roaring
 * bitmaps. Indices on a modified field no longer cover the updated fragments (their fragment
 * bitmaps lose them, as pylance's do); the others carry over.
 *
 * Conflicts, as pylance 14 resolves them (TransactionMatrixSuite): retryable when a Delete,
 * Update, Rewrite or DataReplacement changed one of the fragments, and over any Merge;
 * incompatible with an Overwrite or Restore (and a Project that dropped an updated column);
 * rebased over the rest.
 *
 * `updated` is what one attempt committed: the fragments as the transaction records them.
 */
final case class ColumnUpdate(
    files: Map[Long, TableProtos.DataFile],
    matched: Map[Long, RoaringBitmap],
    fieldsModified: Seq[Int],
    updated: Seq[TableProtos.DataFragment] = Nil
) extends Operation with IndexEdit {
  override def name: String = "Update"

  override def writeTo(t: Transaction.Builder): Unit = {
    val u = Transaction.Update.newBuilder()
      .addAllUpdatedFragments(updated.asJava)
      .addAllFieldsModified(fieldsModified.map(Int.box).asJava)
      .setUpdateMode(Transaction.UpdateMode.REWRITE_COLUMNS)
    matched.toSeq.sortBy(_._1).foreach { case (id, offsets) =>
      u.putUpdatedFragmentOffsetBitmaps(id, Rewrite.bitmapBytes(offsets))
    }
    t.setUpdate(u)
  }

  override def applyTo(m: ManifestBuilder): Operation = {
    val modified = fieldsModified.toSet
    files.values.foreach { f =>
      if (f.getFieldsList.asScala.map(_.intValue) != fieldsModified)
        throw LanceErrors.unsupported(s"An update of columns of ${m.root} must write files of " +
          s"fields ${fieldsModified.mkString(", ")}, not ${f.getFieldsList.asScala.mkString(", ")}")
    }
    val present = m.manifest.getFragmentsList.asScala.map(_.getId).toSet
    val gone = files.keySet -- present
    if (gone.nonEmpty)
      throw LanceErrors.concurrentModification(
        m.root,
        m.readVersion,
        s"fragment(s) " +
          s"${gone.toSeq.sorted.mkString(", ")} this update rewrites columns of are gone",
        retryable = false
      )
    val done = m.manifest.getFragmentsBuilderList.asScala.filter(f => files.contains(f.getId))
      .map { f =>
        val kept = f.getFilesList.asScala.map { d =>
          val ids = d.getFieldsList.asScala.map(id =>
            if (modified(id.intValue)) -2 else id.intValue
          )
          d.toBuilder.clearFields().addAllFields(ids.map(Int.box).asJava).build()
        }.filter(_.getFieldsList.asScala.exists(_.intValue != -2))
        f.clearFiles().addAllFiles(kept.asJava).addFiles(files(f.getId))
        if (m.usesRowIds) matched.get(f.getId).filterNot(_.isEmpty).foreach { offsets =>
          val rows = f.getPhysicalRows.toInt
          val vs = RowIdSequences.versions(f.getInlineLastUpdatedAtVersions, rows, 1L)
          offsets.forEach((o: Int) => vs(o) = m.version)
          f.setInlineLastUpdatedAtVersions(RowIdSequences.encodeVersions(vs))
        }
        f.build()
      }
    copy(updated = done.toSeq)
  }

  override def editsIndices: Boolean = true

  override def editIndices(
      root: String,
      readVersion: Long,
      indices: Seq[TableProtos.IndexMetadata]
  ): Seq[TableProtos.IndexMetadata] = {
    val modified = fieldsModified.toSet
    indices.map { i =>
      if (
        i.getFragmentBitmap.isEmpty ||
        !i.getFieldsList.asScala.exists(f => modified(f.intValue))
      ) i
      else {
        val bitmap = Rewrite.bitmap(i)
        files.keys.foreach(id => bitmap.remove(id.toInt))
        i.toBuilder.setFragmentBitmap(Rewrite.bitmapBytes(bitmap)).build()
      }
    }
  }

  override def conflictRow: ConflictRow = ConflictRow.ColumnUpdate

  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution = {
    def overlap(ids: Set[Long], what: String): Resolution =
      Resolution.retryableOnOverlap(c, ids, what, files.keySet, "this update rewrites columns of")
    kind match {
      case OperationKind.Rewrite => overlap(c.rewrittenFragmentIds, "rewrote")
      case OperationKind.DataReplacement =>
        overlap(c.replacedFragmentIds, "replaced the data files of")
      case OperationKind.Delete | OperationKind.Update =>
        overlap(c.updatedFragmentIds ++ c.removedFragmentIds, "changed")
      case OperationKind.Project =>
        val kept = c.txn.get.getProject.getSchemaList.asScala.map(_.getId).toSet
        if (fieldsModified.forall(kept)) Resolution.Rebase
        else Resolution.Incompatible(s"the ${c.operationName} dropped a column this update " +
          "rewrites")
      case other => ConflictTable.noRule(this, other)
    }
  }

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}
