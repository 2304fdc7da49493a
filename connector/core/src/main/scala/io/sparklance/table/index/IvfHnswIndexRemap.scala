package io.sparklance.table.index

import java.io.ByteArrayOutputStream
import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.proto.{IndexProtos, TableProtos}
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table.Snapshot

/**
 * An IVF_HNSW_SQ, IVF_HNSW_FLAT or IVF_HNSW_PQ index rewritten for a compaction, as pylance 14
 * remaps one inside its Rewrite (found against pylance 14.0.2, which does it deterministically:
 * two compactions of the same dataset write the same rows, metadata and buffers).
 *  - `auxiliary.idx` (row addresses and SQ codes, vectors or PQ codes by IVF partition) is
 *    remapped as an IVF_SQ, IVF_FLAT or IVF_PQ index's ([[IvfIndexRemap.remapAux]]): survivors
 *    in order, new addresses, new partition offsets and lengths.
 *  - `index.idx` holds one HNSW graph per partition (rows of `__vector_id`, `__neighbors`,
 *    `_distance`; the partitions' row ranges in the IVF message of global buffer `lance:ivf`;
 *    each graph's entry point, build parameters and level offsets in the JSON array
 *    `lance:hnsw`, an empty text for an empty graph). pylance does not rebuild the graphs: it
 *    repairs each one whose partition lost rows ([[HnswGraphRepair]]) over the partition's
 *    remapped codes or vectors, measured as the index's metric asks ([[SqL2Distances]] for
 *    L2 and cosine, [[SqDotDistances]]; [[FlatL2Distances]], [[FlatCosineDistances]],
 *    [[FlatDotDistances]], [[FlatHammingDistances]] for u8 vectors; [[PqDistances]] for
 *    8- and 4-bit codes),
 *    keeps a graph that lost nothing as it is, writes an empty text for a graph that lost
 *    every node, and renews the IVF ranges and `lance:hnsw`; centroids and the rest of the
 *    metadata are kept.
 * A cosine index stores unit vectors (FLAT) or codes of unit vectors (PQ, SQ); a dot index's
 * PQ codes are of the vectors themselves. Which metrics and layouts are repaired here is
 * [[remappable]]'s to say; other indices are not remapped, so their fragments are not
 * compacted.
 */
object IvfHnswIndexRemap {
  private val Kinds = Set("IVF_HNSW_SQ", "IVF_HNSW_FLAT", "IVF_HNSW_PQ")
  private val Metrics = Set("l2", "cosine", "dot")
  private val IvfKey = "lance:ivf"
  private val HnswKey = "lance:hnsw"
  private val json = new ObjectMapper()

  /**
   * Whether `i` is an IVF_HNSW_SQ, IVF_HNSW_FLAT or (8- or 4-bit, f32 codebook) IVF_HNSW_PQ
   * index of this layout whose graphs we repair as pylance 14 does (small reads), of the L2,
   * cosine or dot metric (IVF_HNSW_FLAT: of f32 vectors), or an IVF_HNSW_FLAT index of u8
   * vectors of the hamming metric.
   */
  def remappable(io: FileIO, s: Snapshot, i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == IvfIndexRemap.DetailsType && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty &&
      i.getFilesList.asScala.map(_.getPath).toSet ==
      Set(IvfIndexRemap.AuxFile, IvfIndexRemap.IndexFile) &&
      indexInfo(io, Paths.join(IvfIndexRemap.dir(s, i), IvfIndexRemap.IndexFile)).exists { n =>
        val kind = n.path("type").asText
        val metric = metricOf(n)
        def aux =
          IndexFileLayout.read(io, Paths.join(IvfIndexRemap.dir(s, i), IvfIndexRemap.AuxFile))
        // Vectors stored as they are must be f32 (or u8 for hamming): f16 distances come from
        // C kernels that differ by CPU, f64 ones are not reproduced here.
        def vectorsOf(t: LogicalType) = aux.fields.lift(1).exists(_.logicalType match {
          case LogicalType.FixedSizeList(item, _) => item == t
          case _ => false
        })
        Kinds(kind) && (kind match {
          case "IVF_HNSW_PQ" => Metrics(metric) && scala.util.Try(pqModel(aux)).isSuccess
          case "IVF_HNSW_FLAT" => if (metric == "hamming") vectorsOf(LogicalType.UInt8)
            else Metrics(metric) && vectorsOf(LogicalType.Float32)
          case _ => Metrics(metric)
        })
      }

  /** The metric named by `lance:index` (pylance writes "l2", "cosine" or "dot"). */
  private def metricOf(info: JsonNode): String =
    info.path("distance_type").asText("l2").toLowerCase(java.util.Locale.ROOT)

  private def indexInfo(io: FileIO, path: String): Option[JsonNode] =
    try {
      val c = FileContainer.open(io.open(path))
      try Option(c.descriptor.getSchema.getMetadataMap.get("lance:index"))
          .map(v => json.readTree(v.toStringUtf8))
      finally c.input.close()
    } catch { case _: Exception => None }

  /** What the remap of `auxiliary.idx` keeps of each partition: new ids and codes. */
  private final class Kept extends IvfIndexRemap.AuxObserver {
    val newIds = scala.collection.mutable.Map.empty[Int, Array[Int]]
    val counts = scala.collection.mutable.Map.empty[Int, Int]
    val codes = scala.collection.mutable.Map.empty[Int, ByteArrayOutputStream]
    var dim = 0
    var byteWidth = 0

    def rows(p: Int, len: Long, first: Long, keep: Array[Int], kept: ColumnArray): Unit = {
      val ids = newIds.getOrElseUpdate(p, Array.fill(len.toInt)(-1))
      var c = counts.getOrElse(p, 0)
      keep.foreach { k => ids(first.toInt + k) = c; c += 1 }
      counts(p) = c
      val fsl = kept.asInstanceOf[FixedSizeListArray]
      dim = fsl.dimension
      val child = fsl.child.asInstanceOf[FixedWidthArray]
      byteWidth = child.byteWidth
      codes.getOrElseUpdate(p, new ByteArrayOutputStream())
        .write(child.data, 0, kept.length * fsl.dimension * child.byteWidth)
    }
  }

  /** Writes the remapped copy of `old` (see [[IvfIndexRemap.apply]] for `moved`, `added`). */
  def apply(
      io: FileIO,
      s: Snapshot,
      old: TableProtos.IndexMetadata,
      moved: Map[Long, Array[Long]],
      added: Seq[Long]
  ): TableProtos.IndexMetadata = {
    val oldDir = IvfIndexRemap.dir(s, old)
    val metric = indexInfo(io, Paths.join(oldDir, IvfIndexRemap.IndexFile)).map(metricOf)
      .getOrElse("l2")
    val auxPath = Paths.join(oldDir, IvfIndexRemap.AuxFile)
    val aux = IndexFileLayout.read(io, auxPath)
    val column = aux.fields.lift(1).map(_.name).getOrElse("")
    val flat = column == "flat"
    val pq = if (column == "__pq_code") Some(pqModel(aux)) else None
    val (start, end) = if (flat || pq.isDefined) (0d, 0d) else sqBounds(aux)
    val kept = new Kept
    val (uuid, newDir, auxSize) = IvfIndexRemap.remapAux(io, s, old, moved, kept)

    val indexPath = Paths.join(oldDir, IvfIndexRemap.IndexFile)
    val layout = IndexFileLayout.read(io, indexPath)
    def corrupt(why: String) = LanceErrors.corruptFile(indexPath, why)
    layout.expect("__vector_id", "__neighbors", "_distance")
    val ivfIndex = layout.metadata.get(IvfKey).flatMap(v => scala.util.Try(v.trim.toInt).toOption)
      .filter(i => i > 0 && i <= layout.globals.size)
      .getOrElse(throw corrupt(s"no global buffer named by '$IvfKey'"))
    val ivf = IndexProtos.IVF.parseFrom(layout.globals(ivfIndex - 1))
    val hnsw = layout.metadata.get(HnswKey).map(v => json.readTree(v))
      .filter(n => n.isArray && n.size == ivf.getOffsetsCount)
      .getOrElse(throw corrupt(s"'$HnswKey' does not describe the ${ivf.getOffsetsCount} " +
        "partitions"))

    // Each partition's graph, repaired (the lance:hnsw entries come before the rows).
    val newIvf = ivf.toBuilder.clearOffsets().clearLengths()
    val newHnsw = json.createArrayNode()
    // Lists keep their items in a column of their own: a column per leaf, none for a list.
    val preOrder = layout.fields.flatMap(_.preOrder)
    val leafColumns = preOrder.map(_.isLeaf).scanLeft(0)((c, leaf) => if (leaf) c + 1 else c)
    val reader = LanceFileReader.openStandalone(
      io,
      indexPath,
      FileFields(
        preOrder.map(_.id).toArray,
        preOrder.indices.map(i => if (preOrder(i).isLeaf) leafColumns(i) else -1).toArray
      )
    )

    def repairPartition(p: Int): HnswGraph = {
      val (off, len) = (ivf.getOffsets(p), ivf.getLengths(p) & 0xffffffffL)
      if (off < 0 || off + len > reader.numRows)
        throw corrupt(s"partition $p [$off, +$len) lies outside the ${reader.numRows} rows")
      // An empty graph is described by an empty text (pylance 14 writes it so).
      val metaText = hnsw.get(p).asText
      val meta = if (metaText.isEmpty) json.createObjectNode() else json.readTree(metaText)
      val graph =
        if (metaText.isEmpty && len == 0)
          HnswGraph(0, Array(0), Array.empty, Array(0), Array.empty, Array.empty)
        else readGraph(reader, layout.fields, off, len.toInt, meta, indexPath)
      val ids = kept.newIds.getOrElse(p, new Array[Int](0))
      if (ids.length != graph.numNodes)
        throw corrupt(s"partition $p has ${graph.numNodes} graph nodes but " +
          s"${ids.length} stored vectors")
      val bytes = kept.codes.get(p).map(_.toByteArray).getOrElse(new Array[Byte](0))
      val store =
        if (flat) {
          if (metric == "hamming") new FlatHammingDistances(bytes, kept.dim)
          else {
            val v = new Array[Float](bytes.length / 4)
            ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(v)
            metric match {
              case "cosine" => new FlatCosineDistances(v, kept.dim)
              case "dot" => new FlatDotDistances(v, kept.dim)
              case _ => new FlatL2Distances(v, kept.dim)
            }
          }
        } else pq match {
          case Some(m) =>
            val rowBytes = if (m.bits == 4) m.numSub / 2 else m.numSub
            val rows = if (m.transposed) untransposed(bytes, rowBytes) else bytes
            // A cosine index's codes are of unit vectors, measured as L2 ones.
            new PqDistances(rows, m.numSub, m.codebook, m.subDim, m.bits, metric == "dot")
          case None => metric match {
              case "cosine" => SqL2Distances.cosine(bytes, kept.dim, start, end)
              case "dot" => new SqDotDistances(bytes, kept.dim, start, end)
              case _ => SqL2Distances.l2(bytes, kept.dim, start, end)
            }
        }
      val efc = meta.path("params").path("ef_construction").asInt(150)
      val repaired = new HnswGraphRepair(graph, ids, store, efc).run()
      newHnsw.add(
        if (repaired eq graph) metaText
        else if (repaired.numRows == 0) ""
        else metadataText(meta, repaired)
      )
      repaired
    }

    val graphs =
      try {
        (0 until ivf.getOffsetsCount).map(p => repairPartition(p))
      } finally reader.close()

    val newIndex = Paths.join(newDir, IvfIndexRemap.IndexFile)
    val w = new LanceFileWriter(
      new StreamSink(io.create(newIndex)),
      layout.fields,
      FileVersion.V2_2,
      schemaMetadata = layout.metadata + (HnswKey -> json.writeValueAsString(newHnsw))
    )
    val indexSize =
      try {
        var written = 0L
        graphs.foreach { g =>
          if (g.numRows > 0) w.write(columns(g))
          newIvf.addOffsets(written).addLengths(g.numRows)
          written += g.numRows
        }
        w.finish(layout.globals.indices.map { i =>
          if (i == ivfIndex - 1) newIvf.build().toByteArray else layout.globals(i)
        }).sizeBytes
      } finally w.close()
    IndexFileLayout.remappedMetadata(
      old,
      uuid,
      moved,
      added,
      Seq(IvfIndexRemap.AuxFile -> auxSize, IvfIndexRemap.IndexFile -> indexSize)
    )
  }

  /** A 4- or 8-bit product quantizer with an f32 codebook, as `auxiliary.idx` describes it. */
  private final case class PqModel(
      numSub: Int,
      subDim: Int,
      bits: Int,
      codebook: Array[Float],
      transposed: Boolean
  )

  /** The PQ model of `auxiliary.idx` (`storage_metadata` and the codebook's global buffer). */
  private def pqModel(aux: IndexFileLayout): PqModel = {
    def corrupt(why: String) = LanceErrors.corruptFile(aux.path, why)
    val m = StorageMetadata.first(aux.metadata).getOrElse(throw corrupt("no PQ storage_metadata"))
    val (bits, numSub, dim) =
      (m.path("nbits").asInt(8), m.path("num_sub_vectors").asInt(0), m.path("dimension").asInt(0))
    if (bits != 8 && bits != 4) throw LanceErrors.unsupported(s"${aux.path}: $bits-bit PQ codes")
    if (numSub <= 0 || dim <= 0 || dim % numSub != 0 || bits == 4 && numSub % 2 != 0)
      throw corrupt(s"$numSub $bits-bit sub-vectors of a $dim-dimensional vector")
    val at = m.path("codebook_position").asInt(0)
    if (at < 1 || at > aux.globals.size) throw corrupt(s"no codebook in global buffer $at")
    val t = IndexProtos.Tensor.parseFrom(aux.globals(at - 1))
    if (t.getDataType != IndexProtos.Tensor.DataType.FLOAT32)
      throw LanceErrors.unsupported(s"${aux.path}: a ${t.getDataType} PQ codebook")
    val codebook = new Array[Float](t.getData.size / 4)
    if (codebook.length != (1 << bits) * dim)
      throw corrupt(s"a codebook of ${codebook.length} floats")
    t.getData.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(codebook)
    PqModel(numSub, dim / numSub, bits, codebook, m.path("transposed").asBoolean(false))
  }

  /** Row-major codes from codes stored byte j of every row, then byte j + 1, … */
  private def untransposed(bytes: Array[Byte], width: Int): Array[Byte] = {
    val n = bytes.length / width
    val out = new Array[Byte](bytes.length)
    var j = 0
    while (j < width) {
      var r = 0
      while (r < n) { out(r * width + j) = bytes(j * n + r); r += 1 }
      j += 1
    }
    out
  }

  /** The SQ quantizer's bounds in `auxiliary.idx`'s `storage_metadata`. */
  private def sqBounds(aux: IndexFileLayout): (Double, Double) = {
    val node = StorageMetadata.first(aux.metadata).map(_.path("bounds"))
      .filter(b => b.has("start") && b.has("end"))
      .getOrElse(throw LanceErrors.corruptFile(aux.path, "no SQ bounds in storage_metadata"))
    (node.get("start").asDouble, node.get("end").asDouble)
  }

  /** Rows `[off, off + len)` of `index.idx`: one partition's graph. */
  private def readGraph(
      reader: LanceFileReader,
      fields: Seq[LanceField],
      off: Long,
      len: Int,
      meta: JsonNode,
      path: String
  ): HnswGraph = {
    val levelOffsets = meta.path("level_offsets").elements().asScala.map(_.asInt).toArray
    if (
      levelOffsets.length < 2 || levelOffsets.last != len || levelOffsets.head != 0 ||
      levelOffsets.sliding(2).exists(w => w(0) > w(1))
    )
      throw LanceErrors.corruptFile(
        path,
        s"HNSW level offsets ${levelOffsets.mkString(",")} " +
          s"do not cover the partition's $len rows"
      )
    if (len == 0) return HnswGraph(
      meta.path("entry_point").asInt,
      levelOffsets,
      Array.empty,
      Array(0),
      Array.empty,
      Array.empty
    )
    val scan = reader.scan(fields, off, off + len)
    val cols =
      try scan.next(len)
      finally scan.close()
    val ids = cols(0).asInstanceOf[FixedWidthArray]
    val nbs = cols(1).asInstanceOf[ListArray]
    val ds = cols(2).asInstanceOf[ListArray]
    val nbData = nbs.child.asInstanceOf[FixedWidthArray].data
    val dData = ds.child.asInstanceOf[FixedWidthArray].data
    val ib = ByteBuffer.wrap(ids.data).order(ByteOrder.LITTLE_ENDIAN)
    val nb = ByteBuffer.wrap(nbData).order(ByteOrder.LITTLE_ENDIAN)
    val db = ByteBuffer.wrap(dData).order(ByteOrder.LITTLE_ENDIAN)
    val nodeIds = new Array[Int](len)
    val edgeOffsets = new Array[Int](len + 1)
    var edges = 0
    var r = 0
    while (r < len) {
      nodeIds(r) = ib.getInt(r * 4)
      val (a, b) = (nbs.offsets(r), nbs.offsets(r + 1))
      if (ds.offsets(r + 1) - ds.offsets(r) != b - a)
        throw LanceErrors.corruptFile(
          path,
          s"graph row ${off + r} has ${b - a} neighbours " +
            s"but ${ds.offsets(r + 1) - ds.offsets(r)} distances"
        )
      edges += b - a
      edgeOffsets(r + 1) = edges
      r += 1
    }
    val edgeIds = new Array[Int](edges)
    val edgeDists = new Array[Float](edges)
    r = 0
    while (r < len) {
      var i = 0
      val (a, d, base) = (nbs.offsets(r), ds.offsets(r), edgeOffsets(r))
      while (i < edgeOffsets(r + 1) - base) {
        edgeIds(base + i) = nb.getInt((a + i) * 4)
        edgeDists(base + i) = db.getFloat((d + i) * 4)
        i += 1
      }
      r += 1
    }
    val n = levelOffsets(1)
    if (nodeIds.exists(id => id < 0 || id >= n) || edgeIds.exists(id => id < 0 || id >= n))
      throw LanceErrors.corruptFile(path, s"a graph row names a node outside the partition's $n")
    HnswGraph(
      meta.path("entry_point").asInt,
      levelOffsets,
      nodeIds,
      edgeOffsets,
      edgeIds,
      edgeDists
    )
  }

  /** The graph's rows as `index.idx` columns. */
  private def columns(g: HnswGraph): Array[ColumnArray] = {
    val n = g.numRows
    val ids = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN)
    g.nodeIds.foreach(ids.putInt)
    val nb = ByteBuffer.allocate(g.edgeIds.length * 4).order(ByteOrder.LITTLE_ENDIAN)
    g.edgeIds.foreach(nb.putInt)
    val ds = ByteBuffer.allocate(g.edgeDists.length * 4).order(ByteOrder.LITTLE_ENDIAN)
    g.edgeDists.foreach(ds.putFloat)
    val e = g.edgeIds.length
    Array(
      new FixedWidthArray(n, null, 4, ids.array()),
      new ListArray(n, null, g.edgeOffsets.clone(), new FixedWidthArray(e, null, 4, nb.array())),
      new ListArray(n, null, g.edgeOffsets.clone(), new FixedWidthArray(e, null, 4, ds.array()))
    )
  }

  /** A partition's `lance:hnsw` entry for its repaired graph, in serde's field order. */
  private def metadataText(old: JsonNode, g: HnswGraph): String = {
    val o: ObjectNode = json.createObjectNode()
    o.put("entry_point", g.entryPoint)
    o.set[JsonNode]("params", old.path("params"))
    val offsets = o.putArray("level_offsets")
    g.levelOffsets.foreach(x => offsets.add(x))
    json.writeValueAsString(o)
  }
}
