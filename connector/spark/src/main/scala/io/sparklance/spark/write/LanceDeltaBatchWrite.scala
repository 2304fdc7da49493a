package io.sparklance.spark.write

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.write._
import org.apache.spark.sql.util.CaseInsensitiveStringMap
import org.roaringbitmap.RoaringBitmap

import io.sparklance.spark.LanceTable
import io.sparklance.storage.{FileIO, Paths, RoutingFileIO, SerializableConf}
import io.sparklance.table.{FeatureFlags, PrimaryKey}
import io.sparklance.table.commit.{DataFileNames, NewFragment}
import io.sparklance.table.txn

object LanceDeltaBatchWrite {
  def plan(
      table: LanceTable,
      cmd: RowLevelOperation.Command,
      tableOptions: Map[String, String]
  ): LanceDeltaBatchWrite = {
    val s = table.snapshot
    val options = LanceWriteOptions.parse(new CaseInsensitiveStringMap(
      (tableOptions + ("path" -> s.root)).asJava
    ))
    val write = txn.WritePlan.append(s, None, s.schema.fields)
    val hadoop = SparkSession.active.sessionState.newHadoopConfWithOptions(tableOptions)
    val sparkTypes = table.schema().fields.toSeq.map(_.dataType)
    val plan = TaskPlan(
      Paths.stripTrailingSlash(s.root),
      write.fields,
      sparkTypes,
      write.fields.indices,
      write.fileVersion,
      options,
      new SerializableConf(hadoop),
      DataFileNames.newToken(),
      managedBlobs = write.managedBlobs
    )
    new LanceDeltaBatchWrite(table, cmd, plan, new RoutingFileIO(hadoop), insertedKeys(table, cmd))
  }

  /**
   * The key columns a MERGE records the inserted keys of: a table with a primary key of
   * top-level columns. (pylance records them when the merge's ON columns are the key; Spark
   * does not tell a write its MERGE condition, so every MERGE does: the more conflicts, never
   * a key inserted twice.)
   */
  private def insertedKeys(
      table: LanceTable,
      cmd: RowLevelOperation.Command
  ): Option[(Seq[Int], InsertedKeyColumns)] = {
    val key = PrimaryKey.of(table.snapshot.schema)
    val top = table.snapshot.schema.fields
    if (
      cmd != RowLevelOperation.Command.MERGE || key.isEmpty ||
      key.exists(_.parentId != -1)
    ) None
    else {
      val ordinals = key.map(k => top.indexWhere(_.id == k.id))
      Some(key.map(_.id) -> InsertedKeyColumns(
        ordinals,
        ordinals.map(i => table.schema().fields(i).dataType)
      ))
    }
  }
}
class LanceDeltaBatchWrite(
    table: LanceTable,
    cmd: RowLevelOperation.Command,
    plan: TaskPlan,
    io: FileIO,
    keys: Option[(Seq[Int], InsertedKeyColumns)] = None
) extends DeltaBatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DeltaWriterFactory =
    new LanceDeltaWriterFactory(plan, keys.map(_._2))

  override def useCommitCoordinator(): Boolean = true

  private def reports(messages: Array[WriterCommitMessage]): Seq[LanceDeltaTaskCommit] =
    messages.toSeq.collect { case m: LanceDeltaTaskCommit => m }

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val all = reports(messages)
    val removed = scala.collection.mutable.HashMap.empty[Long, RoaringBitmap]
    all.flatMap(_.removed).foreach { case (f, bytes) =>
      removed.getOrElseUpdate(f, new RoaringBitmap()).or(LanceDeltaWriter.bitmap(bytes))
    }
    val rewritten = all.flatMap(_.rewritten)
    val inserted = all.flatMap(_.inserted)
    val files = rewritten.map(_._1) ++ inserted
    val op =
      if (files.isEmpty && cmd == RowLevelOperation.Command.DELETE)
        txn.Delete(removed.toMap, s"${cmd.name()} from Spark")
      else {
        val stable = (table.snapshot.readerFeatureFlags & FeatureFlags.StableRowIds) != 0
        val rows = rewritten.map { case (f, ids) =>
          txn.NewRows(NewFragment(f), if (stable) ids else Array.emptyLongArray)
        } ++ inserted.map(f => txn.NewRows(NewFragment(f)))
        // Which columns an UPDATE or MERGE assigned is not known here: all are recorded,
        // as pylance's merge_insert records them.
        val insertedKeys = keys.map { case (ids, _) =>
          val bloom = new txn.KeyBloom()
          all.flatMap(_.insertedKeys).foreach(b => bloom.or(txn.KeyBloom.fromBytes(b)))
          bloom.toFilter(ids)
        }
        txn.Update(
          removed.toMap,
          rows,
          table.snapshot.schema.fields.map(_.id),
          insertedKeys = insertedKeys
        )
      }
    try new txn.Committer(io, plan.root).commit(Some(table.snapshot), op)
    catch {
      case e: Throwable =>
        LanceDataWriter.deleteQuietly(io, plan.root, files)
        throw e
    }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    val all = reports(messages)
    LanceDataWriter.deleteQuietly(
      io,
      plan.root,
      all.flatMap(_.rewritten.map(_._1)) ++ all.flatMap(_.inserted)
    )
  }
}
