package io.sparklance.table.index

import java.nio.ByteBuffer
import java.util.UUID

import scala.jdk.CollectionConverters._

import com.google.protobuf.{Any => ProtoAny, ByteString}
import org.roaringbitmap.RoaringBitmap
import org.slf4j.LoggerFactory

import io.sparklance.LanceErrors
import io.sparklance.format.{LanceField, LogicalType}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileIO, FileTrees}
import io.sparklance.table.{DatasetLayout, FeatureFlags, ManifestFile, Snapshot}
import io.sparklance.table.txn.{CommitOptions, CommitResult, Committer, CreateIndex, Rewrite}

/**
 * Scalar indices of a Lance dataset, created and dropped as pylance 14 does: a BTREE index
 * (`create_scalar_index(column, "BTREE")`: the files of [[BTreeIndexWriter]] under
 * `_indices/<uuid>/`, then one CreateIndex commit covering every fragment of the version
 * read, removing an index of the same name) and `drop_index(name)` (a CreateIndex that only
 * removes). Nothing is retried: a conflicting commit fails, as pylance's index commits do, and
 * the new index's files are deleted.
 */
object ScalarIndexes {
  private val log = LoggerFactory.getLogger(getClass)

  val BTreeDetailsType = "/lance.table.BTreeIndexDetails"

  /** The name pylance gives an index of `column` when none is given. */
  def defaultName(column: String): String = s"${column}_idx"

  /** The size index `i` records for its file `name` (`IndexFile.size_bytes`; 0: none). */
  def fileSize(i: TableProtos.IndexMetadata, name: String): Long =
    i.getFilesList.asScala.find(_.getPath == name).fold(0L)(_.getSizeBytes)

  /** The indices of `s` (pylance's `list_indices()`), system indices (`__...`) included. */
  def list(io: FileIO, s: Snapshot): Seq[TableProtos.IndexMetadata] = ManifestFile.indices(io, s)

  /** The column a BTREE index may be built on: a top-level or struct-nested scalar. */
  def indexableField(s: Snapshot, column: String): LanceField = {
    val parts = column.split('.').toSeq
    val top = s.schema.field(parts.head)
    val f = parts.tail.foldLeft(top)((p, n) => p.flatMap(_.children.find(_.name == n)))
      .getOrElse(throw LanceErrors.schemaMismatch(
        s.root,
        column,
        "is not a column of the " +
          s"dataset (columns: ${s.schema.fields.map(_.name).mkString(", ")})"
      ))
    if (!BTreeTypes(f.logicalType))
      throw LanceErrors.unsupportedType(
        column,
        f.logicalType.toString,
        "a BTREE index is " +
          "built here on integer, date, timestamp (not nanosecond), string and binary columns"
      )
    f
  }

  private val BTreeTypes: LogicalType => Boolean = {
    import LogicalType._
    {
      case Int8 | Int16 | Int32 | Int64 | Date32 | Utf8 | LargeUtf8 | Binary | LargeBinary => true
      case Timestamp(unit, _) => unit != TimeUnit.Nano // Spark reads nanoseconds as micros
      case _ => false
    }
  }

  /**
   * Builds a BTREE index on `column` of `read`: `fill` adds every live row's value and row
   * address (see [[BTreeIndexWriter]]) sorted; then commits it. Returns the committed version.
   */
  def createBTree(
      io: FileIO,
      read: Snapshot,
      column: String,
      name: Option[String],
      replace: Boolean,
      options: CommitOptions = CommitOptions()
  )(
      fill: BTreeIndexWriter => Unit
  ): CommitResult = {
    val field = indexableField(read, column)
    val indexName = name.getOrElse(defaultName(column))
    val existing = list(io, read).filter(_.getName == indexName)
    if (existing.nonEmpty && !replace) throw LanceErrors.indexExists(read.root, indexName)
    val uuid = UUID.randomUUID()
    val dir = DatasetLayout.indexDir(read.root, uuid.toString)
    try {
      val writer = new BTreeIndexWriter(io, dir, field.logicalType)
      val files =
        try { fill(writer); writer.finish() }
        finally writer.close()
      val meta = metadata(uuid, indexName, field.id, read, files)
      val r =
        new Committer(io, read.root, options).commit(Some(read), CreateIndex(Seq(meta), existing))
      log.info(
        "Created BTREE index {} on {} of {} as version {}",
        indexName,
        column,
        read.root,
        Long.box(r.version)
      )
      r
    } catch {
      case e: Throwable =>
        FileTrees.deleteQuietly(io, dir, log)
        throw e
    }
  }

  /** Drops the index `name` (its files stay until cleanup, as pylance leaves them). */
  def drop(
      io: FileIO,
      read: Snapshot,
      name: String,
      options: CommitOptions = CommitOptions()
  ): CommitResult = {
    val all = list(io, read)
    val gone = all.filter(_.getName == name)
    if (gone.isEmpty) throw LanceErrors.indexNotFound(read.root, name, all.map(_.getName))
    val r = new Committer(io, read.root, options).commit(Some(read), CreateIndex(Nil, gone))
    log.info("Dropped index {} of {} as version {}", name, read.root, Long.box(r.version))
    r
  }

  /** A UUID as an index's `uuid` records it (its 16 bytes, big-endian halves). */
  def uuidProto(uuid: UUID): TableProtos.UUID = {
    val id = ByteBuffer.allocate(16).putLong(uuid.getMostSignificantBits)
      .putLong(uuid.getLeastSignificantBits).array()
    TableProtos.UUID.newBuilder().setUuid(ByteString.copyFrom(id)).build()
  }

  private def metadata(
      uuid: UUID,
      name: String,
      fieldId: Int,
      read: Snapshot,
      files: Seq[(String, Long)]
  ): TableProtos.IndexMetadata = {
    val fragments = new RoaringBitmap()
    read.fragments.foreach(f => fragments.add(f.getId.toInt))
    val b = TableProtos.IndexMetadata.newBuilder()
      .setUuid(uuidProto(uuid))
      .addFields(fieldId)
      .setName(name)
      .setDatasetVersion(read.version)
      .setFragmentBitmap(Rewrite.bitmapBytes(fragments))
      .setIndexDetails(ProtoAny.newBuilder().setTypeUrl(BTreeDetailsType))
      // What pylance 14 records: 1 on a table with stable row ids, else 0.
      .setIndexVersion(if ((read.writerFeatureFlags & FeatureFlags.StableRowIds) != 0) 1 else 0)
      .setCreatedAt(System.currentTimeMillis())
    files.foreach { case (path, size) =>
      b.addFiles(TableProtos.IndexFile.newBuilder().setPath(path).setSizeBytes(size))
    }
    b.build()
  }

}
