package io.sparklance.table.index

import java.nio.{ByteBuffer, ByteOrder}
import java.util.UUID

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.codec.LittleEndian
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{FileIO, Paths, StreamSink}
import io.sparklance.table.{DatasetLayout, ManifestFile, Snapshot}

/**
 * An INVERTED (full-text) index rewritten for a compaction, as pylance 14 remaps one inside
 * its Rewrite (Lance's `InnerBuilder::remap`; found against pylance 14.0.2). The index is
 * `metadata.lance` (its partitions and parameters, copied as it is) and per partition `N`:
 *
 *  - `part_N_docs.lance`: a row per document (`_rowid`, `_num_tokens`; schema metadata
 *    `total_tokens`). Documents of deleted rows go, those of compacted fragments take their
 *    rows' new addresses; the rest stay, in order. A document's id is its row number.
 *  - `part_N_invert.lance`: a row per token id, its posting list ([[PostingListCodec]]).
 *    Doc ids shift down past removed documents; every list is encoded again, its BM25 bounds
 *    and impacts computed over the remaining documents. A token whose list empties goes.
 *  - `part_N_tokens.lance`: the token -> id map as an fst ([[FstBuilder]]), `_token_next_id`
 *    and `_token_total_length`. The tokens that went leave it and the ids close up (token
 *    order kept); next id is the number of tokens and total length their bytes. When no
 *    token goes, the fst bytes and total length stay as they are.
 *
 * A partition all of whose documents go stays, empty; `metadata.lance` keeps its partition
 * list (pylance's remap lists the same ids in the order its loads of them finish).
 *
 * With positions (`shared_stream_v2`, `packed_delta_v1`), each list's position stream is
 * encoded again for its new blocks, each document keeping its positions.
 *
 * Files are written in Lance file format 2.2 with the originals' fields, schema metadata and
 * global buffers. Only the layout pylance 14 builds is remapped here (fst token set, format
 * version 2, blocks of 128 with `varint_delta_v1` tails); fragments covered by another are
 * not compacted. The copy gets a new UUID and covers the old fragments it still has plus
 * the new ones made from fragments it covered. (With stable row ids pylance keeps the index:
 * see IndexRemap.)
 */
object InvertedIndexRemap {
  val DetailsType = "/lance.table.InvertedIndexDetails"
  val MetadataFile = "metadata.lance"
  private val InvertColumns = Seq("_posting", "_max_score", "_length", "_impacts")
  private val PositionColumns = Seq("_compressed_position", "_position_block_offset")
  private val DocsColumns = Seq("_rowid", "_num_tokens")
  private val TokensColumns = Seq("_token_fst_bytes", "_token_next_id", "_token_total_length")
  private val PositionKeys =
    Map("positions_layout" -> "shared_stream_v2", "positions_codec" -> "packed_delta_v1")
  private val Expected = Map(
    "token_set_format" -> "fst",
    "format_version" -> "2",
    "posting_tail_codec" -> "varint_delta_v1",
    "posting_block_size" -> "128"
  )

  private def docsFile(p: Long) = s"part_${p}_docs.lance"
  private def invertFile(p: Long) = s"part_${p}_invert.lance"
  private def tokensFile(p: Long) = s"part_${p}_tokens.lance"

  def remappable(io: FileIO, s: Snapshot, i: TableProtos.IndexMetadata): Boolean =
    i.getIndexDetails.getTypeUrl == DetailsType && i.getFieldsCount == 1 &&
      !i.getFragmentBitmap.isEmpty &&
      scala.util.Try(partitions(io, dir(s, i))._1.nonEmpty).getOrElse(false)

  private def dir(s: Snapshot, i: TableProtos.IndexMetadata): String =
    DatasetLayout.indexDir(s.root, ManifestFile.uuidText(i.getUuid))

  /**
   * The index's partition ids and whether it keeps positions, when its layout is one
   * remapped here (else fails).
   */
  private def partitions(io: FileIO, dir: String): (Seq[Long], Boolean) = {
    val path = Paths.join(dir, MetadataFile)
    val meta = IndexFileLayout.read(io, path).metadata
    val params = meta.getOrElse("params", "").replace(" ", "")
    val positions = params.contains("\"with_position\":true")
    def has(m: Map[String, String]) = m.forall { case (k, v) => meta.get(k).contains(v) }
    if (
      !has(Expected) || (!positions && !params.contains("\"with_position\":false")) ||
      (positions && !has(PositionKeys))
    )
      throw LanceErrors.corruptFile(path, "an INVERTED index layout not remapped here")
    val parts = meta.getOrElse("partitions", "").trim.stripPrefix("[").stripSuffix("]")
      .split(',').map(_.trim).filter(_.nonEmpty).map(_.toLong).toSeq
    val columns = if (positions) InvertColumns ++ PositionColumns else InvertColumns
    parts.foreach { p =>
      IndexFileLayout.read(io, Paths.join(dir, invertFile(p))).expect(columns: _*)
      IndexFileLayout.read(io, Paths.join(dir, docsFile(p))).expect(DocsColumns: _*)
      IndexFileLayout.read(io, Paths.join(dir, tokensFile(p))).expect(TokensColumns: _*)
    }
    (parts, positions)
  }

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
    val from = dir(s, old)
    val uuid = UUID.randomUUID()
    val to = DatasetLayout.indexDir(s.root, uuid.toString)
    val (parts, positions) = partitions(io, from)
    val files = parts.flatMap(p => remapPartition(io, from, to, p, positions, moved))
    val meta = io.readFully(Paths.join(from, MetadataFile))
    io.write(Paths.join(to, MetadataFile), meta)
    IndexFileLayout.remappedMetadata(
      old,
      uuid,
      moved,
      added,
      files :+ (MetadataFile -> meta.length.toLong)
    )
  }

  private def remapPartition(
      io: FileIO,
      from: String,
      to: String,
      part: Long,
      positions: Boolean,
      moved: Map[Long, Array[Long]]
  ): Seq[(String, Long)] = {
    // Documents: the rows left, at their new addresses; `newId(d)` -1 for a removed one.
    val docsLayout = IndexFileLayout.read(io, Paths.join(from, docsFile(part)))
    docsLayout.expect(DocsColumns: _*)
    val docCols = readAll(io, docsLayout)
    val n = docCols(0).length
    val rowIds = longs(docCols(0))
    val numTokens = ints(docCols(1))
    val newId = new Array[Int](n)
    var kept = 0
    var i = 0
    while (i < n) {
      val addr = newAddress(rowIds(i), moved)
      if (addr < 0) newId(i) = -1
      else { newId(i) = kept; rowIds(kept) = addr; numTokens(kept) = numTokens(i); kept += 1 }
      i += 1
    }
    val keptRowIds = java.util.Arrays.copyOf(rowIds, kept)
    val keptTokens = java.util.Arrays.copyOf(numTokens, kept)
    val totalTokens = keptTokens.foldLeft(0L)((a, t) => a + (t & 0xffffffffL))
    val avgdl = totalTokens.toFloat / kept.toFloat

    // Posting lists: doc ids moved down past removed documents, emptied lists gone.
    val invertPath = Paths.join(from, invertFile(part))
    val invertLayout = IndexFileLayout.read(io, invertPath)
    val invertCols = readAll(io, invertLayout)
    val postings = invertCols(0).asInstanceOf[ListArray]
    val lengthCol = invertCols(2)
    // With positions: each list's position stream and its blocks' offsets.
    val streams = if (positions) invertCols(4).asInstanceOf[VarBinaryArray] else null
    val offsetLists = if (positions) invertCols(5).asInstanceOf[ListArray] else null
    val offsetValues = if (positions) ints(offsetLists.child) else null
    val blockBytes = postings.child.asInstanceOf[VarBinaryArray]
    val lengths = ints(lengthCol)
    val tokens = postings.length
    val keptToken = new Array[Boolean](tokens)
    val encoded = Array.newBuilder[PostingListCodec.Encoded]
    val newLengths = Array.newBuilder[Int]
    var t = 0
    while (t < tokens) {
      val blocks = (postings.offsets(t) until postings.offsets(t + 1)).map { b =>
        java.util.Arrays.copyOfRange(
          blockBytes.data,
          blockBytes.offsets(b),
          blockBytes.offsets(b + 1)
        )
      }
      val (docs, freqs) = PostingListCodec.decode(blocks, lengths(t), invertPath)
      val docPositions = if (!positions) null
      else PostingListCodec.decodePositions(
        java.util.Arrays.copyOfRange(streams.data, streams.offsets(t), streams.offsets(t + 1)),
        java.util.Arrays.copyOfRange(
          offsetValues,
          offsetLists.offsets(t),
          offsetLists.offsets(t + 1)
        ),
        freqs,
        invertPath
      )
      var m = 0
      var j = 0
      while (j < docs.length) {
        val d = newId(docs(j))
        if (d >= 0) {
          docs(m) = d; freqs(m) = freqs(j)
          if (positions) docPositions(m) = docPositions(j)
          m += 1
        }
        j += 1
      }
      if (m > 0) {
        keptToken(t) = true
        encoded += PostingListCodec.encode(
          java.util.Arrays.copyOf(docs, m),
          java.util.Arrays.copyOf(freqs, m),
          keptTokens,
          avgdl,
          if (positions) java.util.Arrays.copyOf(docPositions, m) else null
        )
        newLengths += m
      }
      t += 1
    }
    val lists = encoded.result()

    val docsOut = docsFile(part) -> write(
      io,
      to,
      docsFile(part),
      docsLayout,
      docsLayout.metadata.updated("total_tokens", totalTokens.toString),
      Array(u64Array(keptRowIds), u32Array(keptTokens))
    )
    val postingColumns = Array[ColumnArray](
      binaryLists(lists.map(_.blocks)),
      f32Array(lists.map(_.maxScore)),
      u32Array(newLengths.result()),
      binaryLists(lists.map(_.impacts))
    )
    val positionColumns = if (!positions) Array.empty[ColumnArray]
    else {
      val ss = lists.map(_.positions)
      val offs = lists.map(_.positionOffsets)
      Array[ColumnArray](
        new VarBinaryArray(ss.length, null, ss.scanLeft(0)(_ + _.length), ss.flatten),
        new ListArray(offs.length, null, offs.scanLeft(0)(_ + _.length), u32Array(offs.flatten))
      )
    }
    val invertOut = invertFile(part) -> write(
      io,
      to,
      invertFile(part),
      invertLayout,
      invertLayout.metadata,
      postingColumns ++ positionColumns
    )
    val tokensOut = tokensFile(part) -> remapTokens(io, from, to, part, keptToken)
    Seq(invertOut, tokensOut, docsOut)
  }

  /** Writes the token set without the tokens that went; returns the file's size. */
  private def remapTokens(
      io: FileIO,
      from: String,
      to: String,
      part: Long,
      kept: Array[Boolean]
  ): Long = {
    val path = Paths.join(from, tokensFile(part))
    val layout = IndexFileLayout.read(io, path)
    layout.expect(TokensColumns: _*)
    val cols = readAll(io, layout)
    val (fst, totalCol) = (cols(0).asInstanceOf[VarBinaryArray], cols(2))
    if (fst.length != 1) throw LanceErrors.corruptFile(path, s"${fst.length} token sets")
    val oldBytes = java.util.Arrays.copyOfRange(fst.data, fst.offsets(0), fst.offsets(1))
    val (keys, ids) = FstReader.entries(oldBytes, path)
    if (ids.exists(id => id < 0 || id >= kept.length))
      throw LanceErrors.corruptFile(path, s"a token id beyond the ${kept.length} posting lists")
    val (bytes, nextId, total) = if (kept.forall(identity)) {
      (oldBytes, keys.length, longs(totalCol)(0))
    } else {
      // New ids: each kept token's rank among the kept ids.
      val rank = new Array[Int](kept.length)
      var r = 0
      kept.indices.foreach { i => rank(i) = r; if (kept(i)) r += 1 }
      val keep = keys.indices.filter(k => kept(ids(k).toInt)).toArray
      (
        FstBuilder.build(keep.map(keys), keep.map(k => rank(ids(k).toInt).toLong)),
        keep.length,
        keep.foldLeft(0L)((a, k) => a + keys(k).length)
      )
    }
    write(
      io,
      to,
      tokensFile(part),
      layout,
      layout.metadata,
      Array(
        new VarBinaryArray(1, null, Array(0, bytes.length), bytes),
        u32Array(Array(nextId)),
        u64Array(Array(total))
      )
    )
  }

  private def newAddress(rowId: Long, moved: Map[Long, Array[Long]]): Long =
    moved.get(rowId >>> 32) match {
      case None => rowId
      case Some(to) =>
        val off = rowId & 0xffffffffL
        if (off < to.length) to(off.toInt) else -1L
    }

  private def readAll(io: FileIO, layout: IndexFileLayout): Array[ColumnArray] = {
    val reader = layout.listReader(io)
    try {
      val rows = reader.numRows.toInt
      reader.scan(layout.fields, 0, rows).next(rows)
    } finally reader.close()
  }

  private def write(
      io: FileIO,
      dir: String,
      name: String,
      layout: IndexFileLayout,
      metadata: Map[String, String],
      columns: Array[ColumnArray]
  ): Long = {
    val w = new LanceFileWriter(
      new StreamSink(io.create(Paths.join(dir, name))),
      layout.fields,
      FileVersion.V2_2,
      schemaMetadata = metadata
    )
    try {
      w.write(columns)
      w.finish(layout.globals).sizeBytes
    } finally w.close()
  }

  private def longs(c: ColumnArray): Array[Long] = {
    val f = c.asInstanceOf[FixedWidthArray]
    LittleEndian.toLongs(f.data, 0, f.length)
  }

  private def ints(c: ColumnArray): Array[Int] = {
    val f = c.asInstanceOf[FixedWidthArray]
    LittleEndian.toInts(f.data, 0, f.length)
  }

  private def u64Array(v: Array[Long]): FixedWidthArray = {
    val b = ByteBuffer.allocate(8 * v.length).order(ByteOrder.LITTLE_ENDIAN)
    b.asLongBuffer().put(v)
    new FixedWidthArray(v.length, null, 8, b.array())
  }

  private def u32Array(v: Array[Int]): FixedWidthArray = {
    val b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN)
    b.asIntBuffer().put(v)
    new FixedWidthArray(v.length, null, 4, b.array())
  }

  private def f32Array(v: Array[Float]): FixedWidthArray = {
    val b = ByteBuffer.allocate(4 * v.length).order(ByteOrder.LITTLE_ENDIAN)
    b.asFloatBuffer().put(v)
    new FixedWidthArray(v.length, null, 4, b.array())
  }

  /** A list<large_binary> column: row `i` holds the byte strings `rows(i)`. */
  private def binaryLists(rows: Array[Array[Array[Byte]]]): ListArray = {
    val items = rows.flatten
    val child =
      new VarBinaryArray(items.length, null, items.scanLeft(0)(_ + _.length), items.flatten)
    new ListArray(rows.length, null, rows.scanLeft(0)(_ + _.length), child)
  }
}
