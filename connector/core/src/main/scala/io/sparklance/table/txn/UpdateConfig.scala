package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.LanceErrors
import io.sparklance.format.writer.SchemaProtos
import io.sparklance.table.PrimaryKey
import io.sparklance.proto.TransactionProtos.Transaction

/**
 * Lance `UpdateConfig`: changes the table config (`ds.config()`, `Manifest.config`), the
 * table metadata (`Manifest.table_metadata`), the schema metadata or one field's metadata,
 * written in the new-style `UpdateMap` fields only, as pylance 14 writes them. No data
 * changes, so the fragments and the index section carry over.
 *
 * Conflicts (pylance's `check_update_config_txn`): with a committed UpdateConfig, incompatible
 * when either upserts a config key the other upserts or deletes, or both change the schema
 * metadata, or both change the same field's metadata; with a committed Overwrite,
 * incompatible when this changes schema or field metadata or the two touch the same config
 * key; compatible with everything else (a true rebase, the read version kept).
 */
final case class UpdateConfig(
    config: Option[UpdateMap] = None,
    tableMetadata: Option[UpdateMap] = None,
    schemaMetadata: Option[UpdateMap] = None,
    fieldMetadata: Map[Int, UpdateMap] = Map.empty
) extends Operation {
  override def name: String = "UpdateConfig"

  override def writeTo(t: Transaction.Builder): Unit = {
    val u = Transaction.UpdateConfig.newBuilder()
    config.foreach(m => u.setConfigUpdates(m.toProto))
    tableMetadata.foreach(m => u.setTableMetadataUpdates(m.toProto))
    schemaMetadata.foreach(m => u.setSchemaMetadataUpdates(m.toProto))
    fieldMetadata.toSeq.sortBy(_._1).foreach { case (id, m) =>
      u.putFieldMetadataUpdates(id, m.toProto)
    }
    t.setUpdateConfig(u)
  }

  override def applyTo(m: ManifestBuilder): Operation = {
    val b = m.manifest
    config.foreach { u =>
      val next = u.applyTo(b.getConfigMap.asScala.toMap, identity[String])
      b.clearConfig().putAllConfig(next.asJava)
    }
    tableMetadata.foreach { u =>
      val next = u.applyTo(b.getTableMetadataMap.asScala.toMap, identity[String])
      b.clearTableMetadata().putAllTableMetadata(next.asJava)
    }
    schemaMetadata.foreach { u =>
      val next = u.applyTo(b.getSchemaMetadataMap.asScala.toMap, UpdateConfig.bytes)
      b.clearSchemaMetadata().putAllSchemaMetadata(next.asJava)
    }
    // The primary key is set once (Lance rejects any later change, on rebase too, so two
    // writers setting different keys cannot both win).
    if (
      PrimaryKey.touches(this) &&
      b.getFieldsList.asScala.exists(f =>
        f.getUnenforcedPrimaryKey ||
          f.containsMetadata(PrimaryKey.Marker) || f.containsMetadata(PrimaryKey.Position)
      )
    )
      throw LanceErrors.invalidSchemaChange(m.root, "the primary key is set and cannot change")
    fieldMetadata.foreach { case (id, u) =>
      val i = (0 until b.getFieldsCount).find(b.getFields(_).getId == id).getOrElse(
        throw LanceErrors.invalidSchemaChange(m.root, s"field id $id does not exist")
      )
      val f = b.getFieldsBuilder(i)
      val next = u.applyTo(f.getMetadataMap.asScala.toMap, UpdateConfig.bytes)
      f.clearMetadata().putAllMetadata(next.asJava)
      // Lance mirrors the key's markers into the field's booleans.
      SchemaProtos.mirrorPrimaryKey(f, k => next.get(k).map(_.toStringUtf8))
    }
    this
  }

  override def conflictRow: ConflictRow = ConflictRow.UpdateConfig

  override def refine(kind: OperationKind, c: CommittedTransaction): Resolution = kind match {
    case OperationKind.Overwrite =>
      val keys = configKeysClash(c)
      if (schemaMetadata.nonEmpty || fieldMetadata.nonEmpty)
        Resolution.Incompatible(s"the ${c.operationName} replaced the schema whose metadata " +
          "this UpdateConfig changes")
      else if (keys.nonEmpty)
        Resolution.Incompatible(s"the ${c.operationName} also set config key(s) " +
          keys.toSeq.sorted.mkString(", "))
      else Resolution.Rebase
    case OperationKind.UpdateConfig =>
      val keys = configKeysClash(c)
      val other = c.txn.get.getUpdateConfig
      val sameFields = fieldMetadata.keySet.intersect(
        other.getFieldMetadataUpdatesMap.keySet.asScala.map(_.intValue).toSet
      )
      if (keys.nonEmpty)
        Resolution.Incompatible("both change config key(s) " + keys.toSeq.sorted.mkString(", "))
      else if (schemaMetadata.nonEmpty && other.hasSchemaMetadataUpdates)
        Resolution.Incompatible("both change the schema metadata")
      else if (sameFields.nonEmpty)
        Resolution.Incompatible("both change the metadata of field id(s) " +
          sameFields.toSeq.sorted.mkString(", "))
      else Resolution.Rebase
    case other => ConflictTable.noRule(this, other)
  }

  /** Config keys one side upserts and the other upserts or deletes (`upsert_key_conflict`). */
  private def configKeysClash(c: CommittedTransaction): Set[String] = {
    val ours = config.getOrElse(UpdateMap(Nil))
    val (theirUpserts, theirDeletes) = UpdateConfig.configKeys(c)
    ours.upserted.intersect(theirUpserts ++ theirDeletes) ++
      theirUpserts.intersect(ours.upserted ++ ours.deleted)
  }

  override def keepsIndices: Boolean = true

  override def extraWritableFlags: Long = ManifestBuilder.NonReusableFieldIds
}

object UpdateConfig {
  private def bytes(s: String): ByteString = ByteString.copyFromUtf8(s)

  /** The config keys a committed Overwrite or UpdateConfig upserts and deletes. */
  def configKeys(c: CommittedTransaction): (Set[String], Set[String]) = c.txn match {
    case Some(t) if t.getOperationCase == Transaction.OperationCase.OVERWRITE =>
      (t.getOverwrite.getConfigUpsertValuesMap.keySet.asScala.toSet, Set.empty)
    case Some(t) if t.getOperationCase == Transaction.OperationCase.UPDATE_CONFIG =>
      val u = t.getUpdateConfig
      if (u.hasConfigUpdates) {
        val m = UpdateMap.fromProto(u.getConfigUpdates)
        (m.upserted, m.deleted)
      } else (u.getUpsertValuesMap.keySet.asScala.toSet, u.getDeleteKeysList.asScala.toSet)
    case _ => (Set.empty, Set.empty)
  }
}
