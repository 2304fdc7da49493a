package io.sparklance.table.vector

import java.nio.{ByteBuffer, ByteOrder}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.proto.{IndexProtos, TableProtos}
import io.sparklance.storage.{FileIO, Paths}
import io.sparklance.table.{DatasetLayout, LiveRows, ManifestFile}
import io.sparklance.table.index.StorageMetadata

/**
 * An IVF_FLAT, IVF_SQ or IVF_PQ vector index as pylance 14 writes it (found against pylance
 * 14.0.2), read for search; or an IVF_HNSW_FLAT, IVF_HNSW_SQ or IVF_HNSW_PQ index, whose
 * `auxiliary.idx` is laid out the same (its `index.idx` also holds a graph per partition,
 * which search does not walk: it scores every row of a probed partition, which is what
 * pylance's graph search finds when its `ef` reaches the partition's size). Two Lance files
 * under `_indices/<uuid>/`:
 *  - `index.idx`: no rows; schema metadata `lance:index` = `{"type": "IVF_PQ", "distance_type":
 *    "l2"}` and `lance:ivf` naming the global buffer holding the IVF message whose
 *    `centroids_tensor` is the `[partitions, dim]` float32 centroids.
 *  - `auxiliary.idx`: a row per indexed row, `_rowid` (its row address) and `flat` (the vector;
 *    for a cosine index scaled to unit length), `__sq_code` (a byte per dimension) or
 *    `__pq_code` (a byte per sub-vector), grouped by partition; the IVF message named by
 *    `lance:ivf` there holds each partition's row offset and length. Its `storage_metadata`
 *    (a JSON array of one JSON text) holds the SQ `bounds` `{start, end}`, or the PQ
 *    `num_sub_vectors`, `nbits`, `transposed` and `codebook_position`: the global buffer whose
 *    `Tensor` is the codebook, `[256, dim]` float32 laid out sub-vector by sub-vector (the 256
 *    codewords of sub-vector j are the `256 * dim / m` floats from `j * 256 * dim / m`).
 *
 * @param metric the index's distance (`distance_type`)
 */
final class IvfIndex private (
    val uuid: String,
    val kind: String,
    val metric: VectorMetric,
    val dim: Int,
    val centroids: Array[Float],
    val offsets: Array[Long],
    val lengths: Array[Int],
    val quantizer: IvfQuantizer,
    val auxPath: String,
    val fragments: Set[Long]
) extends Serializable {

  def numPartitions: Int = lengths.length

  /** The metric partitions are probed and codes compared by: l2 for a cosine index. */
  def innerMetric: VectorMetric = if (metric == VectorMetric.Cosine) VectorMetric.L2 else metric

  /**
   * The query as the index compares it: scaled to unit length for a cosine index, as Lance
   * does before probing and scoring.
   */
  def prepare(q: Array[Float]): Array[Float] = {
    if (q.length != dim) throw LanceErrors.invalidOption(
      "q",
      s"${q.length} values",
      s"the vector index $uuid holds vectors of $dim values"
    )
    if (metric == VectorMetric.Cosine) VectorMetric.normalized(q) else q
  }

  /**
   * The `n` partitions whose centroids are nearest the prepared query `q` (by l2, or dot for
   * a dot index), nearest first; ties by partition id.
   */
  def probe(q: Array[Float], n: Int): Array[Int] = {
    val m = innerMetric
    val d = Array.tabulate(numPartitions)(p => m.distance(q, centroids, p * dim, dim))
    Array.range(0, numPartitions).sortWith { (a, b) =>
      java.lang.Float.compare(d(a), d(b)) match { case 0 => a < b; case c => c < 0 }
    }.take(math.max(0, n))
  }

  /** The centroid of partition `p`. */
  def centroid(p: Int): Array[Float] =
    java.util.Arrays.copyOfRange(centroids, p * dim, p * dim + dim)

  /**
   * Scores partitions `parts` for the prepared query `q` into `top`, keeping the rows
   * `live` accepts: one open of `auxiliary.idx`, one read per partition.
   */
  def search(io: FileIO, parts: Seq[Int], q: Array[Float], live: LiveRows, top: TopK): Unit =
    searchMany(io, parts.map(p => (p, Seq((q, top)))), live)

  /**
   * Scores each partition of `parts` for every (prepared query, its top) pair given with it,
   * keeping the rows `live` accepts: one open of `auxiliary.idx`, one read per partition,
   * however many queries probe it.
   */
  def searchMany(io: FileIO, parts: Seq[(Int, Seq[(Array[Float], TopK)])], live: LiveRows): Unit = {
    val layout = auxFields(io)
    val reader = LanceFileReader.openStandalone(
      io,
      auxPath,
      FileFields(layout.map(_.id).toArray, layout.indices.toArray)
    )
    try parts.foreach { case (p, queries) =>
        if (p < 0 || p >= numPartitions)
          throw LanceErrors.corruptFile(auxPath, s"no partition $p among $numPartitions")
        val n = lengths(p)
        if (n > 0) {
          val start = offsets(p)
          if (start + n > reader.numRows) throw LanceErrors.corruptFile(
            auxPath,
            s"partition $p [$start, +$n) lies outside the ${reader.numRows} rows"
          )
          val scan = reader.scan(layout, start, start + n)
          try {
            val Array(ids, codes) = scan.next(n)
            val rowIds = IvfIndex.longs(ids, auxPath)
            val c = centroid(p)
            val dist = new Array[Float](n)
            // Whether each row may be returned: asked of `live` once, for every query.
            val ok = Array.tabulate(n)(i => live.contains(rowIds(i)))
            queries.foreach { case (q, top) =>
              quantizer.score(q, c, codes, n, dist)
              var i = 0
              while (i < n) {
                val d = dist(i)
                if (ok(i) && !d.isNaN) top.offer(d, rowIds(i))
                i += 1
              }
            }
          } finally scan.close()
        }
      }
    finally reader.close()
  }

  private def auxFields(io: FileIO): Seq[LanceField] = {
    val c = FileContainer.open(io.open(auxPath))
    try LanceSchema.fromProto(
        c.descriptor.getSchema.getFieldsList.asScala.toSeq,
        Map.empty,
        auxPath
      ).fields
    finally c.input.close()
  }
}

object IvfIndex {
  val DetailsType = "/lance.index.pb.VectorIndexDetails"
  val Kinds: Set[String] =
    Set("IVF_FLAT", "IVF_SQ", "IVF_PQ", "IVF_HNSW_FLAT", "IVF_HNSW_SQ", "IVF_HNSW_PQ")
  private val json = new ObjectMapper()

  /** The directory of index `i`'s files. */
  def dir(root: String, i: TableProtos.IndexMetadata): String =
    DatasetLayout.indexDir(root, ManifestFile.uuidText(i.getUuid))

  /** Whether `i` is a vector index (of any kind) on one field. */
  def isVector(i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == DetailsType && i.getFieldsCount == 1

  /** The `type` of a vector index (`IVF_PQ`, `IVF_HNSW_SQ`, …) from its `index.idx`. */
  def kind(io: FileIO, root: String, i: TableProtos.IndexMetadata): String = {
    val path = Paths.join(dir(root, i), "index.idx")
    val (md, _) = metadataAndGlobals(io, path, Set.empty)
    md.get("lance:index").map(v => json.readTree(v).path("type").asText(""))
      .getOrElse(throw LanceErrors.corruptFile(path, "no 'lance:index' metadata"))
  }

  /** Reads index `i` (of a table at `root`) for search. */
  def open(io: FileIO, root: String, i: TableProtos.IndexMetadata): IvfIndex = {
    val d = dir(root, i)
    val indexPath = Paths.join(d, "index.idx")
    val auxPath = Paths.join(d, "auxiliary.idx")
    val uuid = ManifestFile.uuidText(i.getUuid)
    val (imd, iglobals) = metadataAndGlobals(io, indexPath, Set(ivfBuffer(indexPath, _)))
    val info = imd.get("lance:index").map(json.readTree)
      .getOrElse(throw LanceErrors.corruptFile(indexPath, "no 'lance:index' metadata"))
    val kind = info.path("type").asText("")
    if (!Kinds(kind)) throw LanceErrors.unsupported(s"vector index $uuid is $kind: only " +
      s"${Kinds.toSeq.sorted.mkString(", ")} indices are searched through the index " +
      "(search with use_index=False)")
    val metric = VectorMetric.parse(info.path("distance_type").asText("l2"))
    val ivfModel = IndexProtos.IVF.parseFrom(iglobals(ivfBuffer(indexPath, imd)))
    if (!ivfModel.hasCentroidsTensor) throw LanceErrors.corruptFile(indexPath, "no centroids")
    val (centroids, shape) = floats(ivfModel.getCentroidsTensor, indexPath, "centroids")
    if (shape.length != 2)
      throw LanceErrors.corruptFile(indexPath, s"centroids of shape ${shape.mkString("x")}")
    val dim = shape(1)

    val (amd, aglobals) = metadataAndGlobals(
      io,
      auxPath,
      Set(ivfBuffer(auxPath, _), md => codebookBuffer(md).getOrElse(-1))
    )
    val ivfAux = IndexProtos.IVF.parseFrom(aglobals(ivfBuffer(auxPath, amd)))
    if (ivfAux.getOffsetsCount != ivfAux.getLengthsCount || ivfAux.getLengthsCount != shape(0))
      throw LanceErrors.corruptFile(
        auxPath,
        s"${ivfAux.getOffsetsCount} offsets and " +
          s"${ivfAux.getLengthsCount} lengths for ${shape(0)} centroids"
      )
    val storage = StorageMetadata.first(amd).getOrElse(json.createObjectNode())
    // An IVF_HNSW_* index keeps its codes or vectors in `auxiliary.idx` as IVF_* does; its
    // graphs (in `index.idx`) are not walked: the probed partitions are scored in full.
    val quantizer: IvfQuantizer = kind.replace("HNSW_", "") match {
      case "IVF_FLAT" => IvfQuantizer.Flat(dim, metric)
      case "IVF_SQ" =>
        val b = storage.path("bounds")
        if (storage.path("num_bits").asInt(8) != 8) throw LanceErrors.unsupported(
          s"vector index $uuid: SQ with ${storage.path("num_bits").asInt} bits"
        )
        IvfQuantizer.Sq(dim, metricOf(metric), b.path("start").asDouble, b.path("end").asDouble)
      case _ =>
        val m = storage.path("num_sub_vectors").asInt(0)
        if (storage.path("nbits").asInt(8) != 8) throw LanceErrors.unsupported(
          s"vector index $uuid: PQ with ${storage.path("nbits").asInt} bits"
        )
        if (m <= 0 || dim % m != 0)
          throw LanceErrors.corruptFile(auxPath, s"$m sub-vectors of $dim dimensions")
        val at = codebookBuffer(amd).getOrElse(
          throw LanceErrors.corruptFile(auxPath, "no codebook_position")
        )
        val (codebook, cshape) =
          floats(IndexProtos.Tensor.parseFrom(aglobals(at)), auxPath, "codebook")
        if (codebook.length != 256 * dim) throw LanceErrors.corruptFile(
          auxPath,
          s"a codebook of shape ${cshape.mkString("x")} for $dim dimensions"
        )
        IvfQuantizer.Pq(
          dim,
          metricOf(metric),
          m,
          codebook,
          storage.path("transposed").asBoolean(false)
        )
    }
    val bitmap = new org.roaringbitmap.RoaringBitmap()
    if (!i.getFragmentBitmap.isEmpty) bitmap.deserialize(i.getFragmentBitmap.asReadOnlyByteBuffer())
    new IvfIndex(
      uuid,
      kind,
      metric,
      dim,
      centroids,
      ivfAux.getOffsetsList.asScala.map(_.longValue).toArray,
      ivfAux.getLengthsList.asScala.map(_.intValue).toArray,
      quantizer,
      auxPath,
      bitmap.toArray.map(_.toLong & 0xffffffffL).toSet
    )
  }

  private def metricOf(m: VectorMetric): VectorMetric =
    if (m == VectorMetric.Cosine) VectorMetric.L2 else m

  private def ivfBuffer(path: String, md: Map[String, String]): Int =
    md.get("lance:ivf").flatMap(v => scala.util.Try(v.trim.toInt).toOption)
      .getOrElse(throw LanceErrors.corruptFile(path, "no global buffer named by 'lance:ivf'"))

  private def codebookBuffer(md: Map[String, String]): Option[Int] =
    StorageMetadata.first(md).map(_.path("codebook_position").asInt(-1)).filter(_ > 0)

  /** A file's schema metadata and the global buffers `wanted` picks from it (by number). */
  private def metadataAndGlobals(
      io: FileIO,
      path: String,
      wanted: Set[Map[String, String] => Int]
  ): (Map[String, String], Map[Int, Array[Byte]]) = {
    val c =
      try FileContainer.open(io.open(path))
      catch {
        case e: java.io.FileNotFoundException =>
          throw LanceErrors.corruptFile(path, "the vector index file is missing", e)
      }
    try {
      val md = c.descriptor.getSchema.getMetadataMap.asScala
        .map { case (k, v) => k -> v.toStringUtf8 }.toMap
      val numbers = wanted.map(_(md)).filter(n => n > 0 && n < c.numGlobalBuffers)
      (md, numbers.map(n => n -> c.globalBuffer(n)).toMap)
    } finally c.input.close()
  }

  /** A float32 tensor's values and shape. */
  private def floats(
      t: IndexProtos.Tensor,
      path: String,
      what: String
  ): (Array[Float], Array[Int]) = {
    if (t.getDataType != IndexProtos.Tensor.DataType.FLOAT32) throw LanceErrors.unsupported(
      s"$path: $what of type ${t.getDataType} (float32 only)"
    )
    val bytes = t.getData.asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN)
    val out = new Array[Float](bytes.remaining / 4)
    bytes.asFloatBuffer().get(out)
    val shape = t.getShapeList.asScala.map(_.intValue).toArray
    if (shape.product != out.length) throw LanceErrors.corruptFile(
      path,
      s"$what of shape ${shape.mkString("x")} holds ${out.length} values"
    )
    (out, shape)
  }

  /** The values of a uint64/int64 column. */
  private[vector] def longs(a: ColumnArray, path: String): Array[Long] = a match {
    case f: FixedWidthArray if f.byteWidth == 8 =>
      val out = new Array[Long](f.length)
      ByteBuffer.wrap(f.data, 0, f.length * 8).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer()
        .get(out)
      out
    case _ => throw LanceErrors.corruptFile(path, "_rowid is not a 64-bit column")
  }
}
