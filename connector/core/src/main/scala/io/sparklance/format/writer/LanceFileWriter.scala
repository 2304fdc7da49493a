package io.sparklance.format.writer

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.blob.{BlobSidecarWriter, BlobSidecars}
import io.sparklance.proto.FileProtos
import io.sparklance.storage.OutputSink

/**
 * Writes one Lance data file of version 2.0, 2.1 or 2.2, streaming: batches of rows come in
 * as one [[ColumnArray]] per top-level field (shaped exactly as the field tree: structs carry
 * every child, maps are lists of key/value structs), pages go out as each column's buffer
 * fills, and `finish` writes the metadata and footer. Memory per column is bounded by the
 * page budget, whatever the file size.
 */
final class LanceFileWriter(
    sink: OutputSink,
    val fields: Seq[LanceField],
    val version: FileVersion,
    options: FileWriterOptions = FileWriterOptions(),
    sidecars: BlobSidecars = BlobSidecars.None,
    /** The file schema's metadata (what an index file records, e.g. its batch size). */
    schemaMetadata: Map[String, String] = Map.empty,
    /**
     * A finished writer of the same fields and version whose page buffers this one takes
     * over (the previous file of a task rolling over), so that they are not grown from a few
     * KiB again for each file; null, or any other writer, for new buffers.
     */
    previous: LanceFileWriter = null,
    /** The file's path, for errors. */
    name: String = "a new data file"
) extends AutoCloseable {

  private val leafPaths: Seq[Seq[LeafPath]] =
    if (version.structural) fields.map(LeafPath.leaves) else Nil
  private val numColumns =
    if (version.structural) leafPaths.map(_.size).sum else V20ColumnWriter.numColumns(fields)
  private val container = new ContainerWriter(sink, version, numColumns)

  /** Blob v2 bytes that leave the data file: one writer per file, shared by its blob columns. */
  private val sidecarWriter = new BlobSidecarWriter(sidecars)
  private val structural: Seq[Seq[LeafColumnWriter]] =
    if (!version.structural) Nil
    else {
      val reuse = previous != null && previous.canHandOver(fields, version)
      var col = 0
      leafPaths.zipWithIndex.map { case (paths, f) =>
        paths.zipWithIndex.map { case (lp, j) =>
          val old = if (!reuse) null
          else previous.structural(f)(j) match {
            case s: StructuralLeafWriter => s
            case _ => null
          }
          val w =
            if (lp.isBlob) new StructuralBlobWriter(
              col,
              lp,
              version,
              container,
              options.pageBudgetBytes,
              sidecarWriter
            )
            else new StructuralLeafWriter(
              col,
              lp,
              version,
              container,
              options.pageBudgetBytes,
              EncodingParams.of(lp.leaf, lp.path(0)),
              old
            )
          col += 1
          w
        }
      }
    }
  private val v20: Seq[V20ColumnWriter] =
    if (version.structural) Nil
    else {
      var col = 0
      fields.map { f =>
        val w = V20ColumnWriter(f, col, container, options.pageBudgetBytes);
        col += V20ColumnWriter.columnsOf(f); w
      }
    }

  private var rows = 0L
  private var finished = false

  /** The page value buffers of the plain leaf columns (what a next file may take over). */
  private[writer] def pageBuffers: Seq[LeafValues] = structural.flatten.collect {
    case s: StructuralLeafWriter => s.pageValues
  }

  /** Finished, and its buffers fit a new writer of `fields` in `version`. */
  def canHandOver(fields: Seq[LanceField], version: FileVersion): Boolean =
    finished && version.structural && this.version == version && this.fields == fields

  /** Bytes the column buffers hold room for: what keeping this finished writer costs. */
  def bufferBytes: Long = structural.iterator.flatten.map {
    case s: StructuralLeafWriter => s.capacity
    case _ => 0L
  }.sum

  def numRows: Long = rows

  /** Bytes written so far (pages flushed); what is still buffered is not counted. */
  def bytesWritten: Long = sink.position

  /** Distinct values taken of the dictionary columns with narrow keys. */
  private val dictionaryLimits = new FileDictionaryLimits(fields, version)

  /**
   * Writes every row of `columns`. A batch this file cannot take whole (a dictionary column
   * would hold more distinct values than its keys index) fails: writers that can roll over
   * to another file use [[writeSome]].
   */
  def write(columns: Array[ColumnArray]): Unit = {
    val n = if (columns.isEmpty) 0 else columns(0).length
    if (writeSome(columns) < n)
      throw LanceErrors.unsupported(s"Cannot write $n rows to one Lance file: " +
        dictionaryLimits.describe)
  }

  /**
   * Writes the leading rows of `columns` that this file can take and returns how many: all
   * of them unless a dictionary column with narrow keys (int8, uint8, int16, uint16) would
   * then hold more distinct values than its keys index; the rest belong in a new file.
   * Fails when the file cannot take even the first row of an empty file's worth.
   */
  def writeSome(columns: Array[ColumnArray]): Int = {
    require(!finished, "file already finished")
    require(
      columns.length == fields.length,
      s"expected ${fields.length} columns, got ${columns.length}"
    )
    if (columns.isEmpty) return 0
    val all = columns(0).length
    columns.foreach(c =>
      require(
        c.length == all,
        s"columns of one batch must have the same length ($all vs ${c.length})"
      )
    )
    if (all == 0) return 0
    val n = dictionaryLimits.fit(columns, all)
    if (n == 0) {
      if (rows == 0) throw LanceErrors.unsupported("Cannot write a row to a Lance file: it " +
        "alone holds more distinct values than its dictionary keys index: " +
        dictionaryLimits.describe)
      return 0
    }
    val part = if (n == all) columns else columns.map(ColumnArrays.slice(_, 0, n))
    var i = 0
    while (i < part.length) {
      if (version.structural) structural(i).foreach(_.append(part(i)))
      else v20(i).append(part(i))
      i += 1
    }
    rows += n
    n
  }

  /**
   * Flushes the last pages and writes metadata and footer. Does not close the sink.
   * `globalBuffers` become global buffers 1, 2, … (buffer 0 is the file descriptor): what an
   * index file keeps there.
   */
  def finish(globalBuffers: Seq[Array[Byte]] = Nil): WrittenFile = {
    require(!finished, "file already finished")
    finished = true
    if (version.structural) structural.foreach(_.foreach(_.finish())) else v20.foreach(_.finish())
    val columnFields =
      if (version.structural) leafPaths.flatten.map(_.leaf)
      else fields.flatMap(PackedStructs.columnFields)
    PageTypeGuard.check(name, version, columnFields, container.pagesOf)
    sidecarWriter.close()
    val schema =
      FileProtos.Schema.newBuilder().addAllFields(SchemaProtos.toProto(SchemaProtos.fileFields(
        fields,
        version
      )).asJava)
    schemaMetadata.foreach { case (k, v) => schema.putMetadata(k, ByteString.copyFromUtf8(v)) }
    val size = container.finish(
      FileProtos.FileDescriptor.newBuilder().setSchema(schema).setLength(rows).build(),
      globalBuffers
    )
    val ids =
      if (version.structural) leafPaths.flatten.map(_.leaf.id).toArray
      else fields.flatMap(PackedStructs.columnFields).map(_.id).toArray
    WrittenFile(ids, ids.indices.toArray, rows, size, version)
  }

  /** Closes the data file and any sidecar still open (after a failure; `finish` closes them otherwise). */
  override def close(): Unit =
    try sidecarWriter.close()
    finally sink.close()
}
