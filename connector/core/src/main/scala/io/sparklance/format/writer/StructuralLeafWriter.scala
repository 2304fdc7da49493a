package io.sparklance.format.writer

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, LogicalType}
import io.sparklance.proto.EncodingsV21Protos._

/**
 * Writes one leaf column of a 2.1/2.2 file. Batches are shredded into levels and visible
 * values and buffered until the page budget is reached, then flushed as one page of whole
 * rows, so memory per column stays near the budget whatever the file size.
 *
 * The page layout follows pylance 14.0.2's order of choices: a page with no valid value is
 * a constant (all-null) page; in 2.2 a page whose valid values are all equal is a constant
 * page holding that value; a low-cardinality page is a dictionary-encoded mini-block page;
 * values under 256 bytes go to mini-block chunks (or as `lance-encoding:structural-encoding`
 * says); wider values are zipped with their levels (full-zip).
 */
private[writer] final class StructuralLeafWriter(
    val column: Int,
    lp: LeafPath,
    version: FileVersion,
    container: ContainerWriter,
    pageBudgetBytes: Long,
    params: EncodingParams = EncodingParams.Default,
    /** The same leaf's finished writer of the previous file, whose empty buffers it takes. */
    previous: StructuralLeafWriter = null
) extends LeafColumnWriter with LeafPage {

  private val large = version.minor >= 2
  private val rep: ShortBuf =
    if (lp.maxRep == 0) null else if (previous != null) previous.rep else new ShortBuf()
  private val defs: ShortBuf =
    if (lp.maxDef == 0) null else if (previous != null) previous.defs else new ShortBuf()
  private val values: LeafValues =
    if (previous != null) previous.values
    else LeafValues.forShape(lp.shape, lp.leaf.name, LeafValues.isLarge(lp.leaf.logicalType))
  private val scratch: PageScratch = if (previous != null) previous.scratch else new PageScratch
  private var rows = 0L
  private var numLevels = 0
  private var firstRow = 0L

  /** Child byte widths when the leaf is a packed struct, else null. */
  private val packedWidths = if (lp.isPacked) PackedStructs.childWidths(lp.leaf, version) else null

  /** The leaf's dictionary type, if any: every page with a value is then a dictionary page. */
  private val dict =
    if (lp.isBlob || lp.isPacked) None else DeclaredDictionary.of(lp.leaf)
  dict.foreach(d => DeclaredDictionary.checkValues(lp.leaf.name, d, values))

  def append(top: ColumnArray): Unit = {
    val s = Shredder.shred(lp, top)
    val leafValues =
      if (packedWidths == null) s.values else PackedStructs.pack(lp.leaf, packedWidths, s.values)
    if (rep != null) rep.addAll(s.rep, 0, s.numLevels)
    if (defs != null) defs.addOrZeros(s.defs, s.numLevels)
    numLevels += s.numLevels
    values.append(leafValues, s.visibleIdx, s.numVisible)
    rows += top.length
    if (values.bytes + 4L * numLevels >= pageBudgetBytes) flush()
  }

  def finish(): Unit = if (rows > 0) flush()

  private def flush(): Unit = {
    val levels = PageLevels(lp, if (defs == null) null else defs.array, numLevels)
    val valid = countValid()
    if (values.count == 0 || valid == 0 || values.isInstanceOf[NullValuesBuf])
      AllNullPageEncoder.write(this, levels)
    else if (dict.isDefined) writeDictionary(levels, dict.get)
    else if (packedWidths != null) writePacked(levels)
    else if (!(large && ConstantPageEncoder.tryWrite(this, levels))) writeValues(levels)
    firstRow += rows
    rows = 0; numLevels = 0
    if (rep != null) rep.clear()
    if (defs != null) defs.clear()
    values.clear()
  }

  /** Dictionary, mini-block or full-zip, falling back when a chunk cannot fit the grammar. */
  private def writeValues(levels: PageLevels): Unit = {
    val dict = DictionaryEncoder.tryEncode(values, params, version)
    if (
      dict.exists(d =>
        MiniBlockEncoder.write(
          this,
          levels,
          ValueCompressors.fixed(d.indices, 4, bool = false, d.count, params),
          d.dictionary
        )
      )
    ) return
    val mini = params.structural match {
      case Some("miniblock") => true
      case Some(_) => false
      case None => narrow
    }
    if (mini && MiniBlockEncoder.write(this, levels, miniBlockValues, null)) return
    FullZipEncoder.write(
      this,
      levels,
      values match {
        case v: VarValuesBuf => ValueCompressors.fullZip(v, lp.leaf.logicalType, params, scratch)
        case _ => null
      }
    )
  }

  /** A page of a dictionary-typed leaf: keys of the declared width into the page's entries. */
  private def writeDictionary(levels: PageLevels, d: LogicalType.Dictionary): Unit = {
    val n = values.count
    val e = DeclaredDictionary.number(values, valueNulls())
    val width = DeclaredDictionary.keyWidth(lp.leaf.name, d)
    val keys = DeclaredDictionary.keyBytes(e.keys, n, width)
    val chunks = ValueCompressors.fixed(keys, width, bool = false, n, params)
    val block = DeclaredDictionary.block(e, values, params, version)
    if (!MiniBlockEncoder.write(this, levels, chunks, block))
      throw LanceErrors.unsupported(s"Column '${lp.leaf.name}': a page of this dictionary " +
        "column does not fit Lance mini-block chunks")
  }

  /** Which buffered values are nulls (visible items above def level 0); null when none can be. */
  private def valueNulls(): Array[Boolean] = {
    if (defs == null) return null
    val out = new Array[Boolean](values.count)
    val d = defs.array
    var k = 0
    var i = 0
    while (i < numLevels) {
      if (d(i) <= lp.maxVisibleDef) { out(k) = d(i) != 0; k += 1 }
      i += 1
    }
    out
  }

  /**
   * A packed struct page, as pylance writes it (never constant or dictionary): mini-block
   * `PackedStruct(Flat)`, or with a string or binary child (2.2) full-zip
   * `VariablePackedStruct` ([[VariablePackedRows]]).
   */
  private def writePacked(levels: PageLevels): Unit = values match {
    case rows: VarValuesBuf =>
      FullZipEncoder.write(
        this,
        levels,
        VariablePackedRows.payload(
          lp.leaf,
          packedWidths,
          rows,
          c => EncodingParams.of(c, c),
          scratch
        )
      )
    case _ => writeFixedPacked(levels)
  }

  private def writeFixedPacked(levels: PageLevels): Unit = {
    val f = values.asInstanceOf[FixedValuesBuf]
    if (
      !MiniBlockEncoder.write(
        this,
        levels,
        new PackedStructChunks(f.data.array, packedWidths, f.count),
        null
      )
    )
      throw LanceErrors.unsupported(
        s"Column '${lp.leaf.name}': a page of this packed struct does not fit Lance mini-block chunks"
      )
  }

  private def miniBlockValues: ChunkValues = values match {
    case f: FixedValuesBuf => ValueCompressors.fixed(
        f.data.array,
        f.width,
        f.bool,
        f.count,
        params,
        decimal128 = lp.leaf.logicalType match {
          case LogicalType.Decimal(128, _, _) => true
          case _ => false
        }
      )
    case v: VarValuesBuf => ValueCompressors.variable(v, lp.leaf.logicalType, params, scratch)
    case l: FslValuesBuf => new FslChunks(l)
    case _: NullValuesBuf => LeafValues.noValues
  }

  private def narrow: Boolean = values match {
    case v: VarValuesBuf => v.maxLen < 256
    case f: FixedValuesBuf => f.width < 256
    case l: FslValuesBuf => l.width < 256
    case _: NullValuesBuf => LeafValues.noValues
  }

  private def countValid(): Int = {
    if (defs == null) values.count
    else {
      var c = 0; var i = 0; val d = defs.array;
      while (i < numLevels) { if (d(i) == 0) c += 1; i += 1 }; c
    }
  }

  // The page encoders read the buffered page through LeafPage.
  def leafPath: LeafPath = lp
  def repLevels: Array[Short] = if (rep == null) null else rep.array
  def canonicalDefs: Array[Short] = if (defs == null) null else defs.array
  def levelCount: Int = numLevels
  def pageValues: LeafValues = values
  def pageRows: Long = rows
  def isLarge: Boolean = large
  def fileVersion: FileVersion = version

  def emit(buffers: Seq[ByteBuf], layout: PageLayout): Unit =
    container.addPage(column, buffers, rows, firstRow, layout)

  private var page: ByteBuf = if (previous != null) previous.page else null
  override def pageBuffer(bytes: Int): ByteBuf = {
    // Too small: a new buffer (growing the old one would copy its dead content).
    if (page == null || page.array.length < bytes) page = new ByteBuf(bytes) else page.clear()
    page
  }

  /** Bytes this column's buffers hold room for: what handing them to a next writer keeps. */
  def capacity: Long =
    values.capacity + scratch.capacity + (if (page == null) 0L else page.capacity) +
      2L * ((if (rep == null) 0 else rep.capacity) + (if (defs == null) 0 else defs.capacity))
}

/**
 * A page with no valid value: a constant layout without a value, levels kept when they say
 * more than "null" (shared by plain and blob leaf columns).
 */
private[writer] object AllNullPageEncoder {
  def write(w: LeafPage, levels: PageLevels): Unit = {
    val lp = w.leafPath
    val rep = w.repLevels
    val numLevels = w.levelCount
    val large = w.isLarge
    val version = w.fileVersion
    val b = ConstantLayout.newBuilder()
    levels.layers.foreach(b.addLayers)
    val simple = lp.numLayers == 1 && rep == null
    if (simple) {
      // Every row is a null item: no buffers.
      w.emit(Nil, PageLayout.newBuilder().setConstantLayout(b).build())
    } else {
      val pageDefs = levels.pageDefs(w.canonicalDefs, 0, numLevels)
      // 2.1 stores raw u16 levels; 2.2 compresses each buffer whole with the codec pylance's
      // block compressor would pick, and says so.
      def levelBuf(lv: Array[Short]): ByteBuf =
        if (lv == null) new ByteBuf(8)
        else if (!large) LevelCodec.Plain.encode(lv, 0, numLevels)
        else LevelCodec.choose(lv, numLevels, version).encode(lv, 0, numLevels)
      val repBuf = levelBuf(rep)
      val defBuf = levelBuf(pageDefs)
      if (large) {
        if (rep != null) b.setRepCompression(
          LevelCodec.choose(rep, numLevels, version).encoding
        ).setNumRepValues(numLevels.toLong)
        if (pageDefs != null) b.setDefCompression(LevelCodec.choose(
          pageDefs,
          numLevels,
          version
        ).encoding).setNumDefValues(numLevels.toLong)
      }
      w.emit(Seq(repBuf, defBuf), PageLayout.newBuilder().setConstantLayout(b).build())
    }
  }
}

/**
 * The rep/def layer meanings of one page and the renumbering of canonical def levels into
 * them: a layer that has no null (or no empty list) in this page declares none and gets no level.
 */
private[writer] final class PageLevels(
    val layers: Array[RepDefLayer],
    map: Array[Short],
    val maxPageDef: Int
) {

  /** Page def levels of `[from, until)`, or null when every level is 0 (no def buffer needed). */
  def pageDefs(canonical: Array[Short], from: Int, until: Int): Array[Short] = {
    if (canonical == null || maxPageDef == 0) return null
    val out = new Array[Short](until - from)
    var i = from
    while (i < until) { out(i - from) = map(canonical(i)); i += 1 }
    out
  }
  def mapDef(d: Short): Short = map(d)
}

private[writer] object PageLevels {
  def apply(lp: LeafPath, defs: Array[Short], n: Int): PageLevels = {
    val used = new Array[Boolean](lp.maxDef + 1)
    if (defs != null) { var i = 0; while (i < n) { used(defs(i)) = true; i += 1 } }
    val layers = new Array[RepDefLayer](lp.numLayers)
    val map = new Array[Short](lp.maxDef + 1)
    // pylance 14 counts list depth only over list layers that declare a def level, so a list
    // under a layer that has nulls in this page must declare one (as pylance's writer does).
    val levelsAbove = new Array[Boolean](lp.numLayers + 1)
    var k = lp.numLayers - 1
    while (k >= 0) {
      val nl = lp.nullLevel(k)
      levelsAbove(k) = levelsAbove(k + 1) || used(nl) || (lp.isList(k) && used(nl + 1))
      k -= 1
    }
    var next = 1
    var j = 0
    while (j < lp.numLayers) {
      val nl = lp.nullLevel(j)
      if (!lp.isList(j)) {
        if (used(nl)) {
          layers(j) = RepDefLayer.REPDEF_NULLABLE_ITEM; map(nl) = next.toShort; next += 1
        } else layers(j) = RepDefLayer.REPDEF_ALL_VALID_ITEM
      } else {
        val hasNull = used(nl) || (!used(nl + 1) && levelsAbove(j + 1)); val hasEmpty = used(nl + 1)
        if (hasNull && hasEmpty) {
          layers(j) = RepDefLayer.REPDEF_NULL_AND_EMPTY_LIST; map(nl) = next.toShort;
          map(nl + 1) = (next + 1).toShort; next += 2
        } else if (hasNull) {
          layers(j) = RepDefLayer.REPDEF_NULLABLE_LIST; map(nl) = next.toShort; next += 1
        } else if (hasEmpty) {
          layers(j) = RepDefLayer.REPDEF_EMPTYABLE_LIST; map(nl + 1) = next.toShort; next += 1
        } else layers(j) = RepDefLayer.REPDEF_ALL_VALID_LIST
      }
      j += 1
    }
    new PageLevels(layers, map, next - 1)
  }
}

/** Builders of the small `CompressiveEncoding` trees the writer emits. */
private[writer] object Encodings {
  def flat(bits: Int): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setFlat(Flat.newBuilder().setBitsPerValue(bits.toLong)).build()

  /** Rle{values: Flat(16), run_lengths: Flat(8)}, what pylance writes for levels. */
  val levelRle: CompressiveEncoding =
    CompressiveEncoding.newBuilder().setRle(
      Rle.newBuilder().setValues(flat(16)).setRunLengths(flat(8))
    ).build()

  def inlineBitpacking(wordBits: Int): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setInlineBitpacking(
      InlineBitpacking.newBuilder().setUncompressedBitsPerValue(wordBits.toLong)
    ).build()

  def variable(offsetBits: Int): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setVariable(
      Variable.newBuilder().setOffsets(flat(offsetBits))
    ).build()

  def outOfLineBitpacking(wordBits: Int, packedBits: Int): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setOutOfLineBitpacking(
      OutOfLineBitpacking.newBuilder().setUncompressedBitsPerValue(wordBits.toLong).setValues(flat(
        packedBits
      ))
    ).build()

  def fsst(table: Array[Byte], values: CompressiveEncoding): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setFsst(
      Fsst.newBuilder().setSymbolTable(com.google.protobuf.ByteString.copyFrom(table)).setValues(
        values
      )
    ).build()

  def general(scheme: Int, level: Option[Int], values: CompressiveEncoding): CompressiveEncoding = {
    val c = BufferCompression.newBuilder().setScheme(ValueStats.scheme(scheme))
    level.foreach(l => c.setLevel(l))
    CompressiveEncoding.newBuilder().setGeneral(
      General.newBuilder().setCompression(c).setValues(values)
    ).build()
  }

  def fsl(dim: Int, hasValidity: Boolean, items: CompressiveEncoding): CompressiveEncoding =
    CompressiveEncoding.newBuilder().setFixedSizeList(
      FixedSizeList.newBuilder().setItemsPerValue(dim.toLong).setHasValidity(hasValidity).setValues(
        items
      )
    ).build()
}

private[writer] object WriterChecks {
  def tooManyLevels(column: String): Nothing =
    throw LanceErrors.unsupported(
      s"Column '$column': a page has too many empty or null lists between two values to encode"
    )
}
