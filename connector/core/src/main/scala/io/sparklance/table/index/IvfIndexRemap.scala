package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}
import java.util.UUID

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter, StreamSink}
import io.sparklance.proto.{IndexProtos, TableProtos}
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{ManifestFile, Snapshot}

/**
 * An IVF_FLAT, IVF_SQ or IVF_PQ index rewritten for a compaction, as pylance 14 remaps one
 * inside its Rewrite (found against pylance 14.0.2). Such an index is two Lance files under
 * `_indices/<uuid>/`:
 *  - `auxiliary.idx`: a row per indexed row — `_rowid` (its row address) and what the index
 *    keeps of its vector: the vector itself (`flat`), its scalar-quantized code (`__sq_code`)
 *    or its PQ code (`__pq_code`) — grouped by IVF partition; the partitions' row offsets and
 *    lengths are in the IVF message of the global buffer the schema metadata `lance:ivf`
 *    names. PQ codes are stored transposed within a partition (byte j of every row's code,
 *    then byte j + 1, …) when `storage_metadata` says `"transposed":true`.
 *  - `index.idx`: the centroids and the sub-index (for these kinds, none), which a remap
 *    leaves as they are.
 * The copy keeps each partition's rows in order, drops deleted ones, gives moved ones their
 * new addresses and rewrites the lengths and offsets; schema, metadata, the other global
 * buffers (the PQ codebook) and `index.idx` are kept. It gets a new UUID and covers the old
 * fragments it still has plus the new ones made from fragments it covered. pylance's remap
 * can also merge a partition grown too small into its neighbours, which pylance 14.0.2 did
 * in no case tried: not done here. IVF_HNSW_* indices keep `auxiliary.idx` the same way and
 * repair their graphs in `index.idx` ([[IvfHnswIndexRemap]]).
 */
object IvfIndexRemap {
  val DetailsType = "/lance.index.pb.VectorIndexDetails"
  val AuxFile = "auxiliary.idx"
  val IndexFile = "index.idx"
  private val IvfKey = "lance:ivf"
  private val IndexKey = "lance:index"
  private val Kinds = Set("IVF_FLAT", "IVF_SQ", "IVF_PQ")
  private val StorageColumns = Set("flat", "__sq_code", "__pq_code")

  private[index] def dir(s: Snapshot, i: TableProtos.IndexMetadata): String =
    Paths.join(Paths.join(s.root, "_indices"), ManifestFile.uuidText(i.getUuid))

  /**
   * Whether `i` is an IVF_FLAT, IVF_SQ or IVF_PQ index of this layout (its `index.idx`
   * metadata names the kind: one small read).
   */
  def remappable(io: FileIO, s: Snapshot, i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == DetailsType && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty &&
      i.getFilesList.asScala.map(_.getPath).toSet == Set(AuxFile, IndexFile) &&
      kind(io, Paths.join(dir(s, i), IndexFile)).exists(Kinds)

  /** The `type` of an `index.idx`'s `lance:index` metadata, if it reads. */
  private def kind(io: FileIO, path: String): Option[String] =
    try {
      val c = FileContainer.open(io.open(path))
      try {
        Option(c.descriptor.getSchema.getMetadataMap.get(IndexKey)).flatMap { v =>
          val node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(v.toStringUtf8)
          Option(node.get("type")).map(_.asText)
        }
      } finally c.input.close()
    } catch { case _: Exception => None }

  /**
   * Writes the remapped copy of `old` (an index of `s`) and returns its metadata.
   *
   * @param moved old fragment id -> the new address of each of its rows by offset (-1: a
   *              deleted row)
   * @param added the new fragments made from fragments `old` covered
   */
  def apply(io: FileIO, s: Snapshot, old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]], added: Seq[Long]): TableProtos.IndexMetadata = {
    val (uuid, newDir, auxSize) = remapAux(io, s, old, moved, null)
    val indexBytes = io.readFully(Paths.join(dir(s, old), IndexFile))
    io.write(Paths.join(newDir, IndexFile), indexBytes)
    IndexFileLayout.remappedMetadata(old, uuid, moved, added,
      Seq(AuxFile -> auxSize, IndexFile -> indexBytes.length.toLong))
  }

  /**
   * What a remap of `auxiliary.idx` keeps of a partition, told chunk by chunk (every chunk,
   * even one that keeps nothing): partition `p` of `len` rows, the chunk from row `first` of
   * the partition, the rows it keeps (`keep`, from `first`) and their stored values as written
   * (PQ codes transposed when the file has them so).
   */
  private[index] trait AuxObserver {
    def rows(p: Int, len: Long, first: Long, keep: Array[Int], kept: ColumnArray): Unit
  }

  /**
   * Writes the remapped `auxiliary.idx` of `old` under a new UUID, telling `observer` (if not
   * null) what each partition keeps; the UUID, its directory and the file's size.
   */
  private[index] def remapAux(io: FileIO, s: Snapshot, old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]], observer: AuxObserver): (UUID, String, Long) = {
    val oldDir = dir(s, old)
    val auxPath = Paths.join(oldDir, AuxFile)
    val layout = IndexFileLayout.read(io, auxPath)
    val (fields, metadata, globals) = (layout.fields, layout.metadata, layout.globals)
    def corrupt(why: String) = LanceErrors.corruptFile(auxPath, why)
    // Global buffer n is globals(n - 1): buffer 0 is the file descriptor.
    val ivfIndex = metadata.get(IvfKey).flatMap(v => scala.util.Try(v.trim.toInt).toOption)
      .filter(i => i > 0 && i <= globals.size)
      .getOrElse(throw corrupt(s"no global buffer named by '$IvfKey'"))
    val ivf = IndexProtos.IVF.parseFrom(globals(ivfIndex - 1))
    if (ivf.getOffsetsCount != ivf.getLengthsCount)
      throw corrupt(s"the IVF model has ${ivf.getOffsetsCount} offsets but " +
        s"${ivf.getLengthsCount} lengths")
    val transposed = metadata.get("storage_metadata").exists(isTransposed)
    if (fields.size != 2 || fields.head.name != "_rowid" || !StorageColumns(fields(1).name))
      throw corrupt(s"unexpected columns ${fields.map(_.name).mkString(", ")}")
    fields(1).logicalType match {
      case LogicalType.FixedSizeList(_, _) =>
      case t => throw corrupt(s"column '${fields(1).name}' is $t, not a fixed-size list")
    }

    val uuid = UUID.randomUUID()
    val newDir = Paths.join(Paths.join(s.root, "_indices"), uuid.toString)
    val newAux = Paths.join(newDir, AuxFile)
    val reader = layout.reader(io)
    val newIvf = ivf.toBuilder.clearOffsets().clearLengths()
    val auxSize = try {
      val w = new LanceFileWriter(new StreamSink(io.create(newAux)), fields, FileVersion.V2_2,
        schemaMetadata = metadata)
      try {
        val scan = reader.scan(fields, 0, reader.numRows)
        try {
          var pos = 0L
          var written = 0L
          var p = 0
          while (p < ivf.getOffsetsCount) {
            val start = ivf.getOffsets(p)
            val len = ivf.getLengths(p) & 0xffffffffL
            if (start < pos || start + len > reader.numRows)
              throw corrupt(s"partition $p [$start, +$len) overlaps another or lies outside " +
                s"the ${reader.numRows} rows")
            if (start > pos) scan.skip((start - pos).toInt)
            val kept = remapPartition(scan, p, len, moved, transposed, auxPath, w, observer)
            newIvf.addOffsets(written).addLengths(kept.toInt)
            written += kept
            pos = start + len
            p += 1
          }
        } finally scan.close()
        // Buffer 0 is the descriptor; the others keep their places, the IVF model renewed.
        w.finish(globals.indices.map { i =>
          if (i == ivfIndex - 1) newIvf.build().toByteArray else globals(i)
        }).sizeBytes
      } finally w.close()
    } finally reader.close()
    (uuid, newDir, auxSize)
  }

  /**
   * The next `len` rows of `scan` (one partition), remapped and written to `w`; how many were
   * kept. A transposed partition is read whole and its kept rows' bytes transposed again.
   */
  private def remapPartition(scan: FileScan, p: Int, len: Long, moved: Map[Long, Array[Long]],
      transposed: Boolean, path: String, w: LanceFileWriter, observer: AuxObserver): Long = {
    if (len == 0) return 0L
    if (!transposed) {
      var kept = 0L
      var done = 0L
      while (done < len) {
        val n = math.min(len - done, 65536L).toInt
        val Array(ids, values) = scan.next(n)
        val (keep, newIds) = BTreeIndexRemap.remapped(ids.asInstanceOf[FixedWidthArray], moved)
        val keptValues = if (keep.length == n) values else ColumnArrays.take(values, keep)
        if (keep.nonEmpty) w.write(Array(idArray(newIds), keptValues))
        if (observer != null) observer.rows(p, len, done, keep, keptValues)
        kept += keep.length
        done += n
      }
      kept
    } else {
      if (len > Int.MaxValue / 8) throw LanceErrors.unsupported(s"$path: a partition of $len " +
        "rows is too large to remap in memory")
      val n = len.toInt
      val Array(ids, codes) = scan.next(n)
      val (keep, newIds) = BTreeIndexRemap.remapped(ids.asInstanceOf[FixedWidthArray], moved)
      val fsl = codes.asInstanceOf[FixedSizeListArray]
      val child = fsl.child.asInstanceOf[FixedWidthArray]
      val rowBytes = fsl.dimension * child.byteWidth
      val k = keep.length
      val in = child.data
      val out = new Array[Byte](k * rowBytes)
      var j = 0
      while (j < rowBytes) {
        var r = 0
        while (r < k) { out(j * k + r) = in(j * n + keep(r)); r += 1 }
        j += 1
      }
      val keptCodes = new FixedSizeListArray(k, null, fsl.dimension,
        new FixedWidthArray(k * fsl.dimension, null, child.byteWidth, out))
      if (k > 0) w.write(Array(idArray(newIds), keptCodes))
      if (observer != null) observer.rows(p, len, 0L, keep, keptCodes)
      k.toLong
    }
  }

  /** Whether `storage_metadata` (a JSON array of JSON texts) says the codes are transposed. */
  private def isTransposed(storage: String): Boolean = {
    val json = new com.fasterxml.jackson.databind.ObjectMapper()
    try json.readTree(storage).elements().asScala.exists { e =>
      val inner = if (e.isTextual) json.readTree(e.asText) else e
      inner.path("transposed").asBoolean(false)
    } catch { case _: Exception => false }
  }

  private def idArray(ids: Array[Long]): FixedWidthArray = {
    val b = ByteBuffer.allocate(ids.length * 8).order(ByteOrder.LITTLE_ENDIAN)
    ids.foreach(b.putLong)
    new FixedWidthArray(ids.length, null, 8, b.array())
  }
}
