package io.sparklance.table.index

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.format.{FileContainer, FileFields, LanceField, LanceFileReader, LanceSchema}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.FileIO
import io.sparklance.table.txn.Rewrite

/**
 * What an index file keeps besides its rows, as a remap copies it: its own fields (with ids
 * and field metadata), its schema metadata and its global buffers after the file descriptor
 * (`globals(0)` is global buffer 1: the models and tree maps index files keep there).
 */
private[index] final case class IndexFileLayout(
    path: String,
    fields: Seq[LanceField],
    metadata: Map[String, String],
    globals: IndexedSeq[Array[Byte]]
) {

  /** Fails naming the file unless its columns are `names`. */
  def expect(names: String*): Unit =
    if (fields.map(_.name) != names)
      throw LanceErrors.corruptFile(
        path,
        s"unexpected columns " +
          s"${fields.map(_.name).mkString(", ")} (an index file of ${names.mkString(", ")})"
      )

  /**
   * A reader of the file's rows whose fields may be lists: each leaf field (depth first) is
   * read from the column at its position among the leaves.
   */
  def listReader(io: FileIO): LanceFileReader = {
    def leaves(f: LanceField): Seq[LanceField] =
      if (f.children.isEmpty) Seq(f) else f.children.flatMap(leaves)
    val ids = fields.flatMap(leaves).map(_.id).toArray
    LanceFileReader.openStandalone(io, path, FileFields(ids, ids.indices.toArray))
  }

  /** A reader of the file's rows, every field read by position. */
  def reader(io: FileIO): LanceFileReader = LanceFileReader.openStandalone(io, path, byPosition)

  private def byPosition: FileFields =
    FileFields(fields.map(_.id).toArray, fields.indices.toArray)
}

private[index] object IndexFileLayout {
  def read(io: FileIO, path: String): IndexFileLayout = {
    val container = FileContainer.open(io.open(path))
    try of(path, container)
    finally container.input.close()
  }

  /**
   * The file's layout and a reader of its rows (every field read by position, as
   * [[IndexFileLayout.reader]]) from one opening of the file; the reader closes it. With the
   * size the index's metadata records for the file (`IndexFile.size_bytes`; 0: unknown), its
   * metadata is read once per JVM ([[FileContainer.openKnown]]).
   */
  def open(io: FileIO, path: String, size: Long = 0L): (IndexFileLayout, LanceFileReader) = {
    val container = FileContainer.openKnown(io, path, size)
    try {
      val layout = of(path, container)
      (layout, LanceFileReader.open(container, layout.byPosition))
    } catch {
      case e: Throwable => container.input.close(); throw e
    }
  }

  private def of(path: String, container: FileContainer): IndexFileLayout = {
    val sch = container.descriptor.getSchema
    IndexFileLayout(
      path,
      LanceSchema.fromProto(sch.getFieldsList.asScala.toSeq, Map.empty, path).fields,
      sch.getMetadataMap.asScala.map { case (k, v) => k -> v.toStringUtf8 }.toMap,
      (1 until container.numGlobalBuffers).map(container.globalBuffer)
    )
  }

  /**
   * The metadata of `old`'s remapped copy: a new UUID and files; its fragment bitmap without
   * the compacted fragments (`moved`'s keys) and with the new ones made from fragments it
   * covered (`added`, from [[Rewrite.joining]]).
   */
  def remappedMetadata(
      old: TableProtos.IndexMetadata,
      uuid: java.util.UUID,
      moved: Map[Long, Array[Long]],
      added: Seq[Long],
      files: Seq[(String, Long)]
  ): TableProtos.IndexMetadata = {
    val b = old.toBuilder.clearFiles().setUuid(ScalarIndexes.uuidProto(uuid))
      .setFragmentBitmap(Rewrite.bitmapAfter(Rewrite.bitmap(old), moved.keys, added))
    files.foreach { case (path, size) =>
      b.addFiles(TableProtos.IndexFile.newBuilder().setPath(path).setSizeBytes(size))
    }
    b.build()
  }
}
