package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}
import java.util.UUID

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.proto.{IndexProtos, TableProtos}
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table.{DatasetLayout, ManifestFile, Snapshot}

/**
 * An IVF_FLAT, IVF_SQ, IVF_PQ or IVF_RQ index rewritten for a compaction, as pylance 14
 * remaps one inside its Rewrite (found against pylance 14.0.2). Such an index is two Lance
 * files under `_indices/<uuid>/`:
 *  - `auxiliary.idx`: a row per indexed row — `_rowid` (its row address) and what the index
 *    keeps of its vector: the vector itself (`flat`), its scalar-quantized code (`__sq_code`),
 *    its PQ code (`__pq_code`) or its RaBitQ code and factors (`_rabit_codes`,
 *    `__add_factors`, `__scale_factors`, `__error_factors`, and with more than one bit
 *    `__blocked_ex_codes`, `__add_factors_ex`, `__scale_factors_ex`, all per row) — grouped
 *    by IVF partition; the partitions' row offsets and lengths are in the IVF message of the
 *    global buffer the schema metadata `lance:ivf` names. PQ codes are stored transposed
 *    within a partition (byte j of every row's code, then byte j + 1, …) when
 *    `storage_metadata` says `"transposed":true`; RaBitQ binary codes in 32-row blocks
 *    ([[RabitCodeBlocks]]) when it says `"packed":true`.
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
  private val Kinds = Set("IVF_FLAT", "IVF_SQ", "IVF_PQ", "IVF_RQ")
  private val StorageColumns = Set("flat", "__sq_code", "__pq_code")
  private[index] val RabitCodes = "_rabit_codes"

  /** An IVF_RQ index's columns after `_rowid`: without and with extended codes. */
  private val RabitColumns = Seq(RabitCodes, "__add_factors", "__scale_factors", "__error_factors")
  private val RabitExColumns =
    RabitColumns ++ Seq("__blocked_ex_codes", "__add_factors_ex", "__scale_factors_ex")

  private[index] def dir(s: Snapshot, i: TableProtos.IndexMetadata): String =
    DatasetLayout.indexDir(s.root, ManifestFile.uuidText(i.getUuid))

  /**
   * Whether `i` is an IVF_FLAT, IVF_SQ or IVF_PQ index of this layout (its `index.idx`
   * metadata names the kind: one small read).
   */
  def remappable(io: FileIO, s: Snapshot, i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == DetailsType && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty &&
      i.getFilesList.asScala.map(_.getPath).toSet == Set(AuxFile, IndexFile) &&
      kind(io, Paths.join(dir(s, i), IndexFile)).exists { k =>
        Kinds(k) && (k != "IVF_RQ" || rabitLayout(io, Paths.join(dir(s, i), AuxFile)))
      }

  /**
   * Whether an IVF_RQ `auxiliary.idx` is of pylance 14's layout: packed binary codes, and
   * extended codes (if any) in `__blocked_ex_codes`. Older layouts (codes not packed, the
   * sequential `__ex_codes`), which pylance repacks when it remaps them, are not remapped here.
   */
  private def rabitLayout(io: FileIO, auxPath: String): Boolean =
    try {
      val layout = IndexFileLayout.read(io, auxPath)
      rabitColumns(layout.fields.map(_.name)) && StorageMetadata.flag(layout.metadata, "packed")
    } catch { case _: Exception => false }

  /** Whether `names` (an `auxiliary.idx`'s columns) are RaBitQ storage of pylance 14's. */
  private def rabitColumns(names: Seq[String]): Boolean =
    names.headOption.contains("_rowid") &&
      (names.tail == RabitColumns || names.tail == RabitExColumns)

  /** Whether `names` (an `auxiliary.idx`'s columns) are a storage this remaps. */
  private def storageColumns(names: Seq[String]): Boolean = rabitColumns(names) ||
    names.headOption.contains("_rowid") && names.size == 2 && StorageColumns(names(1))

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
  def apply(
      io: FileIO,
      s: Snapshot,
      old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]],
      added: Seq[Long]
  ): TableProtos.IndexMetadata = {
    val (uuid, newDir, auxSize) = remapAux(io, s, old, moved, null)
    val indexBytes = io.readFully(Paths.join(dir(s, old), IndexFile))
    io.write(Paths.join(newDir, IndexFile), indexBytes)
    IndexFileLayout.remappedMetadata(
      old,
      uuid,
      moved,
      added,
      Seq(AuxFile -> auxSize, IndexFile -> indexBytes.length.toLong)
    )
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
  private[index] def remapAux(
      io: FileIO,
      s: Snapshot,
      old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]],
      observer: AuxObserver
  ): (UUID, String, Long) = {
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
    val transposed = StorageMetadata.flag(metadata, "transposed")
    val packed = fields.size > 1 && fields(1).name == RabitCodes
    if (packed && !StorageMetadata.flag(metadata, "packed"))
      throw corrupt(s"the '$RabitCodes' are not packed")
    val names = fields.map(_.name)
    if (!storageColumns(names)) throw corrupt(s"unexpected columns ${names.mkString(", ")}")
    fields(1).logicalType match {
      case LogicalType.FixedSizeList(_, _) =>
      case t => throw corrupt(s"column '${fields(1).name}' is $t, not a fixed-size list")
    }

    val uuid = UUID.randomUUID()
    val newDir = DatasetLayout.indexDir(s.root, uuid.toString)
    val newAux = Paths.join(newDir, AuxFile)
    val reader = layout.reader(io)
    val newIvf = ivf.toBuilder.clearOffsets().clearLengths()
    val auxSize =
      try {
        val w = new LanceFileWriter(
          new StreamSink(io.create(newAux)),
          fields,
          FileVersion.V2_2,
          schemaMetadata = metadata
        )
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
              val kept =
                remapPartition(scan, p, len, moved, transposed, packed, auxPath, w, observer)
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
   * kept. A partition whose codes are transposed (PQ) or packed (RQ) is read whole and its
   * kept rows' codes laid out so again.
   */
  private def remapPartition(
      scan: FileScan,
      p: Int,
      len: Long,
      moved: Map[Long, Array[Long]],
      transposed: Boolean,
      packed: Boolean,
      path: String,
      w: LanceFileWriter,
      observer: AuxObserver
  ): Long = {
    if (len == 0) return 0L
    if (!transposed && !packed) {
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
      if (len > Int.MaxValue / 64) throw LanceErrors.unsupported(s"$path: a partition of " +
        s"$len rows is too large to remap in memory")
      val n = len.toInt
      val columns = scan.next(n)
      val (keep, newIds) =
        BTreeIndexRemap.remapped(columns(0).asInstanceOf[FixedWidthArray], moved)
      val k = keep.length
      val fsl = columns(1).asInstanceOf[FixedSizeListArray]
      val child = fsl.child.asInstanceOf[FixedWidthArray]
      val rowBytes = fsl.dimension * child.byteWidth
      val codes =
        if (packed) RabitCodeBlocks.take(child.data, n, rowBytes, keep)
        else transposedTake(child.data, n, rowBytes, keep)
      val keptCodes = new FixedSizeListArray(
        k,
        null,
        fsl.dimension,
        new FixedWidthArray(k * fsl.dimension, null, child.byteWidth, codes)
      )
      val rest = columns.drop(2).map(c => if (k == n) c else ColumnArrays.take(c, keep))
      if (k > 0) w.write(Array[ColumnArray](idArray(newIds), keptCodes) ++ rest)
      if (observer != null) observer.rows(p, len, 0L, keep, keptCodes)
      k.toLong
    }
  }

  /** The rows `keep` of `n` codes of `rowBytes` stored transposed, transposed again. */
  private def transposedTake(
      in: Array[Byte],
      n: Int,
      rowBytes: Int,
      keep: Array[Int]
  ): Array[Byte] = {
    val k = keep.length
    val out = new Array[Byte](k * rowBytes)
    var j = 0
    while (j < rowBytes) {
      var r = 0
      while (r < k) { out(j * k + r) = in(j * n + keep(r)); r += 1 }
      j += 1
    }
    out
  }

  private def idArray(ids: Array[Long]): FixedWidthArray = {
    val b = ByteBuffer.allocate(ids.length * 8).order(ByteOrder.LITTLE_ENDIAN)
    ids.foreach(b.putLong)
    new FixedWidthArray(ids.length, null, 8, b.array())
  }
}
