package io.sparklance.table.txn

import io.sparklance.proto.{TableProtos, TransactionProtos}

/**
 * One group of a Rewrite: adjacent fragments (`oldFragments`, as the read version lists
 * them) whose live rows now make `newFragments` (ids already reserved).
 */
final case class RewriteGroup(
    oldFragments: Seq[TableProtos.DataFragment],
    newFragments: Seq[TableProtos.DataFragment]
) {

  def oldIds: Seq[Long] = oldFragments.map(_.getId)

  def toProto: TransactionProtos.Transaction.Rewrite.RewriteGroup = {
    import scala.jdk.CollectionConverters._
    TransactionProtos.Transaction.Rewrite.RewriteGroup.newBuilder()
      .addAllOldFragments(oldFragments.asJava).addAllNewFragments(newFragments.asJava).build()
  }
}
