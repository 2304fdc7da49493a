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
    config: Map[String, String] = Map.empty
) extends Operation {
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
      TableProtos.Manifest.DataStorageFormat.newBuilder().setFileFormat("lance").setVersion(dv)
    )
    b.putAllConfig(config.asJava)
    this
  }

  override def conflictRow: ConflictRow =
    if (mustCreate) ConflictRow.Create else ConflictRow.Overwrite

  // pylance's `upsert_key_conflict`: a config key one side sets and the other sets or removes
  // cannot be decided by commit order.
  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution = {
    val (theirSet, theirRemoved) = UpdateConfig.configKeys(c)
    val clash = config.keySet.intersect(theirSet ++ theirRemoved)
    def clashes = Resolution.Incompatible(s"the ${c.operationName} also changed config " +
      s"key(s) ${clash.toSeq.sorted.mkString(", ")}")
    kind match {
      case OperationKind.Overwrite | OperationKind.UpdateConfig if clash.nonEmpty => clashes
      case OperationKind.Overwrite =>
        Resolution.Retryable(s"the ${c.operationName} replaced the dataset first")
      case OperationKind.UpdateConfig => Resolution.Rebase
      case other => ConflictTable.noRule(this, other)
    }
  }

  override def keepsIndices: Boolean = false
}
