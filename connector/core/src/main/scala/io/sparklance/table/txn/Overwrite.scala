package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.format.LanceField
import io.sparklance.format.writer.{FileVersion, SchemaProtos}
import io.sparklance.proto.{TableProtos, TransactionProtos}
import io.sparklance.table.commit.NewFragment

/**
 * Lance `Overwrite`: a new version with only these fragments and this schema. On a path with
 * no dataset it creates one; `mustCreate` makes it fail if a dataset appeared meanwhile
 * (Spark's error-if-exists and ignore modes). `config` upserts table config keys
 * (`config_upsert_values`, what a CREATE TABLE's TBLPROPERTIES set); the config and table
 * metadata the dataset had are kept, as pylance's overwrite keeps them.
 */
final case class Overwrite(
    fragments: Seq[NewFragment],
    fields: Seq[LanceField],
    schemaMetadata: Map[String, Array[Byte]],
    dataVersion: Option[FileVersion],
    mustCreate: Boolean,
    config: Map[String, String] = Map.empty) extends Operation {
  import TransactionProtos.Transaction.OperationCase._

  override def name: String = "Overwrite"

  override def writeTo(t: TransactionProtos.Transaction.Builder): Unit = {
    val ow = TransactionProtos.Transaction.Overwrite.newBuilder()
      .addAllFragments(fragments.map(_.toProto(0)).asJava)
      .addAllSchema(SchemaProtos.toProto(fields).asJava)
    schemaMetadata.foreach { case (k, v) => ow.putSchemaMetadata(k, ByteString.copyFrom(v)) }
    ow.putAllConfigUpsertValues(config.asJava)
    t.setOverwrite(ow)
  }

  override def applyTo(m: ManifestBuilder): Operation = {
    val b = m.manifest
    b.clearFragments()
    m.newFragments(fragments).foreach(b.addFragments)
    b.clearFields().addAllFields(SchemaProtos.toProto(fields).asJava)
    b.clearSchemaMetadata()
    schemaMetadata.foreach { case (k, v) => b.putSchemaMetadata(k, ByteString.copyFrom(v)) }
    val dv = dataVersion.map(_.name).orElse(m.base.map(_.dataStorageVersion))
      .getOrElse(FileVersion.Default.name)
    b.setDataFormat(
      TableProtos.Manifest.DataStorageFormat.newBuilder().setFileFormat("lance").setVersion(dv))
    b.putAllConfig(config.asJava)
    this
  }

  // An overwrite does not depend on what it read, so it lands on top of any data change;
  // two overwrites racing are a retryable conflict in pylance 14 (observed), which a caller
  // resolves by committing the same overwrite again on the newer version (Committer.execute).
  override def checkAgainst(c: CommittedTransaction): Resolution =
    if (mustCreate)
      Resolution.Incompatible(s"another writer created the dataset (${c.operationName} " +
        s"at version ${c.version}) while this write was creating it")
    else {
      // pylance's `upsert_key_conflict`: a config key one side sets and the other sets or
      // removes cannot be decided by commit order.
      val (theirSet, theirRemoved) = UpdateConfig.configKeys(c)
      val clash = config.keySet.intersect(theirSet ++ theirRemoved)
      c.operationCase match {
        case UPDATE_MEM_WAL_STATE =>
          Resolution.Incompatible(s"the ${c.operationName} cannot be overwritten")
        case OVERWRITE | UPDATE_CONFIG if clash.nonEmpty =>
          Resolution.Incompatible(s"the ${c.operationName} also changed config key(s) " +
            clash.toSeq.sorted.mkString(", "))
        case OVERWRITE =>
          Resolution.Retryable(s"the ${c.operationName} replaced the dataset first")
        case _ => Resolution.Rebase
      }
    }

  override def keepsIndices: Boolean = false
}
