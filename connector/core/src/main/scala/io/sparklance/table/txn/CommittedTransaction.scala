package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.proto.TransactionProtos.Transaction

/**
 * A transaction another writer committed: the version it made and its decoded record (None
 * when the version names no transaction or its file is missing or unreadable).
 */
final case class CommittedTransaction(version: Long, txn: Option[Transaction]) {
  import Transaction.OperationCase._

  /** Lance's name of the committed operation, for messages ("Delete", "Overwrite", ...). */
  def operationName: String = txn match {
    case None => "unrecorded transaction"
    case Some(t) if t.getOperationCase == OPERATION_NOT_SET => "unknown operation"
    case Some(t) =>
      t.getOperationCase.name.toLowerCase.split('_').map(_.capitalize).mkString
  }

  def operationCase: Transaction.OperationCase =
    txn.map(_.getOperationCase).getOrElse(OPERATION_NOT_SET)

  /** Fragments whose deletion vector or data a Delete or Update committed here changed. */
  def updatedFragmentIds: Set[Long] = deleteOrUpdate(
    _.getUpdatedFragmentsList.asScala.map(_.getId),
    _.getUpdatedFragmentsList.asScala.map(_.getId)
  )

  /** Fragments a Delete or Update committed here removed whole. */
  def removedFragmentIds: Set[Long] = deleteOrUpdate(
    _.getDeletedFragmentIdsList.asScala.map(_.longValue),
    _.getRemovedFragmentIdsList.asScala.map(_.longValue)
  )

  private def deleteOrUpdate(
      ofDelete: Transaction.Delete => Iterable[Long],
      ofUpdate: Transaction.Update => Iterable[Long]
  ): Set[Long] = txn.map { t =>
    t.getOperationCase match {
      case DELETE => ofDelete(t.getDelete).toSet
      case UPDATE => ofUpdate(t.getUpdate).toSet
      case _ => Set.empty[Long]
    }
  }.getOrElse(Set.empty)

  /** The keys a primary-key merge committed here inserted (an Update's `inserted_rows`). */
  def insertedKeys: Option[KeyExistenceFilter] = txn.filter(_.getOperationCase == UPDATE)
    .map(_.getUpdate).filter(_.hasInsertedRows)
    .map(u => KeyExistenceFilter.fromProto(u.getInsertedRows))

  /** Fragments a Rewrite committed here replaced (their rows now live elsewhere). */
  def rewrittenFragmentIds: Set[Long] = txn.filter(_.getOperationCase == REWRITE).map { t =>
    val r = t.getRewrite
    val grouped = r.getGroupsList.asScala.flatMap(_.getOldFragmentsList.asScala)
    (r.getOldFragmentsList.asScala ++ grouped).map(_.getId).toSet
  }.getOrElse(Set.empty)

  /** Fragments a DataReplacement committed here gave new data files. */
  def replacedFragmentIds: Set[Long] = txn.filter(_.getOperationCase == DATA_REPLACEMENT).map {
    _.getDataReplacement.getReplacementsList.asScala.map(_.getFragmentId).toSet
  }.getOrElse(Set.empty)
}
