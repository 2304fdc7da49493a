package io.sparklance.format.writer

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.blob.{BlobColumn, BlobKind, BlobSidecarWriter, BlobThresholds}
import io.sparklance.format.codec.{LittleEndian => LE}
import io.sparklance.proto.EncodingsV21Protos._

/**
 * Blob columns of 2.1/2.2 files, written as pylance 14.0.2 writes them (see [[BlobColumn]] for
 * the descriptors). The input of a blob column is its bytes: a binary array, one value per
 * row, whatever the Lance type of the field. Bytes that stay in the data file are written as
 * soon as their batch arrives (each at a 64-byte boundary, as the reference writer places
 * out-of-line buffers); the column itself buffers only fixed-size descriptors and levels and
 * writes a page of them when the page budget fills.
 *
 *  - 2.1, blob v1: descriptors `(position, size)`, an empty value `(0, 0)`; a null row has size
 *    0 and its page definition level in `position` (`def << 16`). The page is a `BlobLayout`
 *    around an all-valid mini-block page of `PackedStruct[64, 64](Flat 128)` values, its
 *    `layers` the column's rep/def meaning in that page.
 *  - 2.2, blob v2: descriptors `(kind, position, size, blob_id, blob_uri)` with struct validity,
 *    as one full-zip page of `VariablePackedStruct` rows; values are inline, packed or dedicated
 *    by the field's thresholds ([[BlobThresholds]]), sidecars written through `sidecars`. A page
 *    whose rows are all null is a constant page, as any other leaf's.
 *
 * Blob v2 columns may sit in lists (2.2): a descriptor per list item, the page's levels those
 * of the list. Blob v1 in lists is refused: pylance 14.0.2 cannot read it back.
 */
private[writer] final class StructuralBlobWriter(
    val column: Int,
    lp: LeafPath,
    version: FileVersion,
    container: ContainerWriter,
    pageBudgetBytes: Long,
    sidecars: BlobSidecarWriter
) extends LeafColumnWriter with LeafPage {
  import StructuralBlobWriter._

  private val blobVersion: BlobColumn.Version = BlobColumn.version(lp.leaf).get
  // pylance 14.0.2 writes blob v1 in lists (2.0/2.1) but cannot read it back.
  if (lp.maxRep > 0 && blobVersion == BlobColumn.V1)
    throw LanceErrors.unsupported(s"Column '${lp.path.map(_.name).mkString(".")}': blobs inside " +
      "lists need data_storage_version 2.2")
  if (blobVersion == BlobColumn.V2 && version.minor < 2)
    throw LanceErrors.unsupported(
      s"Column '${lp.leaf.name}': blob v2 (lance.blob.v2) columns need data_storage_version 2.2 or later"
    )
  if (blobVersion == BlobColumn.V1 && version.minor >= 2)
    throw LanceErrors.unsupported(
      s"Column '${lp.leaf.name}': blob v1 columns are written as blob v2 in Lance 2.2 files"
    )
  private val thresholds = if (blobVersion == BlobColumn.V2) BlobThresholds.of(lp.leaf) else null
  private val width = if (blobVersion == BlobColumn.V1) V1Width else V2FixedWidth

  private val defs = if (lp.maxDef > 0) new ShortBuf() else null
  private val reps = if (lp.maxRep > 0) new ShortBuf() else null

  /**
   * One fixed-size descriptor per visible item (v1: position, size; v2: kind, position, size,
   * blob_id): per row at the top level, per list item (null items included) in lists.
   */
  private val desc = new ByteBuf(4096)
  private var rows = 0
  private var levels = 0
  private var firstRow = 0L
  private val empty = new Array[Byte](0)

  /** Descriptors buffered for the page. */
  private def items: Int = desc.size / width

  def append(top: ColumnArray): Unit = {
    val s = Shredder.shred(lp, top)
    if (defs != null) defs.addOrZeros(s.defs, s.numLevels)
    if (reps != null) reps.addAll(s.rep, 0, s.numLevels)
    var structs: StructArray = null
    val bytes: VarBinaryArray = s.values match {
      case v: VarBinaryArray => v
      case _: NullArray => null
      // Blob v2 values given as {data, uri[, position, size]}, as pylance's BlobType takes them.
      case st: StructArray if blobVersion == BlobColumn.V2 && st.children.length >= 2 =>
        structs = st; null
      case other => throw new IllegalArgumentException(
          s"blob column '${lp.leaf.name}' takes binary values, got ${other.getClass.getSimpleName}"
        )
    }
    desc.ensure(width * s.numVisible)
    var k = 0
    while (k < s.numVisible) {
      val i = if (s.visibleIdx == null) k else s.visibleIdx(k)
      if (i >= 0 && structs != null && !structs.isNull(i)) placeStruct(structs, i)
      else if (i < 0 || bytes == null || bytes.isNull(i))
        desc.zeros(width) // null: patched (v1) or masked (v2) at flush
      else {
        val off = bytes.offsets(i); val len = bytes.offsets(i + 1) - off
        if (blobVersion == BlobColumn.V1) {
          desc.u64(if (len == 0) 0L else container.writeBuffer(bytes.data, off, len));
          desc.u64(len.toLong)
        } else place(bytes.data, off, len)
      }
      k += 1
    }
    rows += top.length
    levels += s.numLevels
    if (width.toLong * items + 4L * levels >= pageBudgetBytes) flush()
  }

  /**
   * A v2 value: dedicated above the dedicated threshold, packed above the inline one, else in
   * the data file. Packed and dedicated values of a managed dataset are Managed descriptors
   * naming their object under `_blobs/` (blob id 0).
   */
  private def place(data: Array[Byte], off: Int, len: Int): Unit =
    if (len > thresholds.inline) {
      val dedicated = len > thresholds.dedicated
      var at = 0L
      val id =
        if (dedicated) sidecars.writeDedicated(data, off, len)
        else {
          val (id, pos) = sidecars.writePacked(data, off, len, thresholds.packFile); at = pos; id
        }
      if (sidecars.managed) {
        setUri(items, sidecars.lastUri) // this item's index in the page
        desc.u8(BlobKind.Managed)
      } else desc.u8(if (dedicated) BlobKind.Dedicated else BlobKind.Packed)
      desc.u64(at); desc.u64(len.toLong); desc.u32(id & 0xffffffffL)
    } else {
      // An empty value still gets the position its (empty) buffer would have, as pylance gives it.
      val pos =
        if (len == 0) container.writeBuffer(empty, 0, 0) else container.writeBuffer(data, off, len)
      desc.u8(BlobKind.Inline); desc.u64(pos); desc.u64(len.toLong); desc.u32(0L)
    }

  private def columnName: String = lp.path.map(_.name).mkString(".")

  /**
   * Value `i` of `{data, uri[, position, size]}` input: its bytes when `data` is set, else the
   * object at `uri` (a range of it when `position` and `size` are set), referenced or ingested
   * as the write's [[io.sparklance.format.blob.ExternalBlobs]] says. pylance's rules: exactly
   * one of data and uri; position and size both or neither; size positive.
   */
  private def placeStruct(st: StructArray, i: Int): Unit = {
    def bad(why: String) = LanceErrors.unsupported(s"Column '$columnName' row value $i: $why")
    val data = st.children(0) match { case v: VarBinaryArray if !v.isNull(i) => v; case _ => null }
    val uri = st.children(1) match {
      case v: VarBinaryArray if !v.isNull(i) =>
        new String(
          v.data,
          v.offsets(i),
          v.offsets(i + 1) - v.offsets(i),
          java.nio.charset.StandardCharsets.UTF_8
        )
      case _ => null
    }
    def long(c: Int): Option[Long] = if (st.children.length <= c) None
    else st.children(c) match {
      case f: FixedWidthArray if !f.isNull(i) && f.byteWidth == 8 => Some(LE.i64(f.data, i * 8))
      case _ => None
    }
    val (position, size) = (long(2), long(3))
    if (data != null && uri != null) throw bad("a blob cannot have both data and uri")
    if (data == null && uri == null)
      throw bad("a blob must set data or uri (a null blob is a null value)")
    if (data != null) {
      if (position.isDefined || size.isDefined) throw bad("position and size need a uri")
      val off = data.offsets(i)
      place(data.data, off, data.offsets(i + 1) - off)
    } else {
      if (uri.isEmpty) throw bad("the blob uri is empty")
      if (position.isDefined != size.isDefined)
        throw bad("an external range needs both position and size")
      if (position.exists(_ < 0)) throw bad(s"position ${position.get} is negative")
      if (size.exists(_ <= 0)) throw bad(s"size ${size.get} must be positive")
      val ext = sidecars.externals
      if (ext.ingest) {
        val b = sidecars.readExternal(uri, position.getOrElse(0L), size.getOrElse(-1L))
        place(b, 0, b.length)
      } else {
        val (id, rel) = ext.reference(uri, columnName)
        setUri(items, rel)
        desc.u8(BlobKind.External); desc.u64(position.getOrElse(0L)); desc.u64(size.getOrElse(0L))
        desc.u32(id & 0xffffffffL)
      }
    }
  }

  /** Managed blobs' `blob_uri` per row of the page (null: empty), allocated on first use. */
  private var uris: Array[String] = _

  private def setUri(row: Int, uri: String): Unit = {
    if (uris == null) uris = new Array[String](math.max(64, row + 1))
    else if (row >= uris.length)
      uris = java.util.Arrays.copyOf(uris, math.max(row + 1, uris.length * 2))
    uris(row) = uri
  }

  def finish(): Unit = if (rows > 0) flush()

  private def flush(): Unit = {
    val pageLevels = PageLevels(lp, canonicalDefs, levels)
    if (blobVersion == BlobColumn.V1) writeV1(pageLevels) else writeV2(pageLevels)
    firstRow += rows
    rows = 0
    levels = 0
    if (defs != null) defs.clear()
    if (reps != null) reps.clear()
    desc.clear()
    if (uris != null) java.util.Arrays.fill(uris.asInstanceOf[Array[AnyRef]], null)
  }

  private def writeV1(levels: PageLevels): Unit = {
    // Null rows carry their page definition level in `position` (no list above: rep is 0).
    if (defs != null) {
      val d = defs.array; val a = desc.array
      var i = 0
      while (i < rows) {
        if (d(i) != 0) LE.putI64(a, i * V1Width, levels.mapDef(d(i)).toLong << 16)
        i += 1
      }
    }
    val outer = this
    val inner = new LeafPage {
      def leafPath: LeafPath = DescriptorLeaf
      def repLevels: Array[Short] = null
      def canonicalDefs: Array[Short] = null
      def levelCount: Int = rows
      def pageValues: LeafValues = null
      def pageRows: Long = rows
      def isLarge: Boolean = outer.isLarge
      def fileVersion: FileVersion = version
      def emit(buffers: Seq[ByteBuf], layout: PageLayout): Unit = {
        val blob = BlobLayout.newBuilder().setInnerLayout(layout)
        levels.layers.foreach(blob.addLayers)
        outer.emit(buffers, PageLayout.newBuilder().setBlobLayout(blob).build())
      }
    }
    if (
      !MiniBlockEncoder.write(
        inner,
        PageLevels(DescriptorLeaf, null, rows),
        new V1DescriptorChunks(desc.array, rows),
        null
      )
    )
      throw new IllegalStateException(
        s"blob column '${lp.leaf.name}': descriptors did not fit a mini-block page"
      )
  }

  private var packedRows: VarValuesBuf = _

  private def writeV2(levels: PageLevels): Unit = {
    val d = canonicalDefs
    val n = items
    var valid = n
    if (d != null) {
      valid = 0; var i = 0; while (i < this.levels) { if (d(i) == 0) valid += 1; i += 1 }
    }
    if (valid == 0) { packedRows = null; AllNullPageEncoder.write(this, levels); return }
    // Row-major descriptor rows: the fixed fields, then blob_uri as a u32 length and its bytes
    // (none but for managed blobs).
    val v = new VarValuesBuf(false)
    v.data.ensure(V2RowWidth * n)
    var maxLen = V2RowWidth
    var i = 0
    while (i < n) {
      v.data.bytes(desc.array, i * V2FixedWidth, V2FixedWidth)
      val uri = if (uris == null || i >= uris.length || uris(i) == null) null
      else uris(i).getBytes(java.nio.charset.StandardCharsets.UTF_8)
      if (uri == null) v.data.u32(0L)
      else {
        v.data.u32(uri.length.toLong); v.data.bytes(uri)
        maxLen = math.max(maxLen, V2RowWidth + uri.length)
      }
      v.offsets.add(v.data.size)
      i += 1
    }
    v.maxLen = maxLen
    packedRows = v
    FullZipEncoder.write(
      this,
      levels,
      new FullZipEncoder.VarPayload(v.offsets.array, v.data.array, V2Encoding)
    )
    packedRows = null
  }

  // The descriptor page as the page encoders see it (2.2: full-zip rows, all-null pages).
  def leafPath: LeafPath = lp
  def repLevels: Array[Short] = if (reps == null) null else reps.array
  def canonicalDefs: Array[Short] = if (defs == null) null else defs.array
  def levelCount: Int = levels
  def pageValues: LeafValues = packedRows
  def pageRows: Long = rows
  def isLarge: Boolean = version.minor >= 2
  def fileVersion: FileVersion = version
  def emit(buffers: Seq[ByteBuf], layout: PageLayout): Unit =
    container.addPage(column, buffers, rows, firstRow, layout)
}

private[writer] object StructuralBlobWriter {
  val V1Width = 16

  /** kind u8, position u64, size u64, blob_id u32. */
  val V2FixedWidth = 21

  /** A v2 descriptor row in a full-zip page: the fixed fields and a 4-byte empty blob_uri. */
  val V2RowWidth = 25

  /** The leaf of a blob page's inner descriptor page: one layer, never null. */
  private[writer] val DescriptorLeaf: LeafPath =
    new LeafPath(Array(LanceField(
      -1,
      -1,
      "descriptor",
      LogicalType.FixedSizeBinary(V1Width),
      nullable = false,
      Map.empty,
      Nil
    )))

  private def fixedField(bits: Int): VariablePackedStruct.FieldEncoding =
    VariablePackedStruct.FieldEncoding.newBuilder().setValue(Encodings.flat(bits)).setBitsPerValue(
      bits.toLong
    ).build()

  /** `VariablePackedStruct` of kind u8, position u64, size u64, blob_id u32 (all Flat) and blob_uri (Variable, 32-bit lengths). */
  val V2Encoding: CompressiveEncoding = CompressiveEncoding.newBuilder().setVariablePackedStruct(
    VariablePackedStruct.newBuilder()
      .addFields(fixedField(8)).addFields(fixedField(64)).addFields(fixedField(64)).addFields(
        fixedField(32)
      )
      .addFields(VariablePackedStruct.FieldEncoding.newBuilder().setValue(
        Encodings.variable(32)
      ).setBitsPerLength(32))
  )
    .build()
}

/** v1 descriptors in mini-block chunks: 16 bytes per row, described as `PackedStruct[64, 64](Flat 128)`. */
private[writer] final class V1DescriptorChunks(data: Array[Byte], val count: Int)
    extends ChunkValues {
  private val flat = new FlatChunks(data, StructuralBlobWriter.V1Width, bool = false, count)
  def numBuffers: Int = 1
  def bytes(from: Int, k: Int): Long = flat.bytes(from, k)
  def buffers(from: Int, k: Int): Seq[ByteBuf] = flat.buffers(from, k)
  def encoding: CompressiveEncoding = CompressiveEncoding.newBuilder().setPackedStruct(
    PackedStruct.newBuilder().addBitsPerValue(64).addBitsPerValue(64).setValues(Encodings.flat(128))
  ).build()
}

/**
 * A blob v1 column of a 2.0 file, as pylance 14.0.2 writes it: the bytes in the data file,
 * the column a `PackedStruct` of two `Flat(64)` children (position, size) per page, with no
 * validity (a null is `(1, 0)`, an empty value `(0, 0)`), and the column-level encoding
 * `ColumnEncoding{blob: Blob{inner: ColumnEncoding{values}}}` that tells readers so.
 */
private[writer] final class V20BlobWriter(f: LanceField, col: Int, c: ContainerWriter, budget: Long)
    extends V20ColumnWriter {
  private val pages = new V20PackedPages(col, c, budget, Seq(8, 8))

  def append(a: ColumnArray): Unit = {
    val n = a.length
    val desc = pages.buf
    desc.ensure(16 * n)
    a match {
      case v: VarBinaryArray =>
        var i = 0
        while (i < n) {
          if (v.isNull(i)) { desc.u64(1L); desc.u64(0L) }
          else {
            val off = v.offsets(i); val len = v.offsets(i + 1) - off
            desc.u64(if (len == 0) 0L else c.writeBuffer(v.data, off, len)); desc.u64(len.toLong)
          }
          i += 1
        }
      case _: NullArray => var i = 0; while (i < n) { desc.u64(1L); desc.u64(0L); i += 1 }
      case other => throw new IllegalArgumentException(
          s"blob column '${f.name}' takes binary values, got ${other.getClass.getSimpleName}"
        )
    }
    pages.added(n)
  }

  def finish(): Unit = {
    pages.flush()
    c.setColumnEncoding(col, V20BlobWriter.ColumnEncoding)
  }
}

private[writer] object V20BlobWriter {
  import io.sparklance.proto.{EncodingsV20Protos => V20}
  val ColumnEncoding: V20.ColumnEncoding = V20.ColumnEncoding.newBuilder().setBlob(
    V20.Blob.newBuilder().setInner(
      V20.ColumnEncoding.newBuilder().setValues(com.google.protobuf.Empty.getDefaultInstance)
    )
  ).build()
}
