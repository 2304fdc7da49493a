package io.sparklance.table

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.blob.BlobColumn
import io.sparklance.storage.{BestEffort, FileIO}

/**
 * Reads rows `[startRow, endRow)` (physical offsets) of one fragment: opens the data files
 * that hold the requested fields, scans them in lockstep, merges their columns, and drops
 * deleted rows. Columns no data file holds (added after this fragment was written) read as
 * nulls. When several files hold the same field, the first one in the manifest wins, and
 * struct children are merged across files, as pylance does.
 *
 * With a pushed filter, the filter's columns are decoded first and evaluated; a batch where no
 * row passes skips the other columns instead of decoding them, and the rows that fail are
 * dropped like deleted ones.
 *
 * Blob columns decode to descriptors; the bytes of the rows kept are then read by [[BlobBytes]].
 *
 * With `sharedBatches` the arrays a call returns may share the file scans' buffers, which the
 * next call overwrites ([[FileScan.nextShared]]): for a caller that copies each batch out
 * (Spark's column vectors) before asking for the next.
 */
final class FragmentReader(
    io: FileIO,
    fragment: FragmentRef,
    fields: Seq[LanceField],
    deletions: DeletionVector,
    startRow: Long,
    endRow: Long,
    filter: FragmentReader.Filter = null,
    sharedBatches: Boolean = false
) extends AutoCloseable {

  /**
   * One data file's scans. With a filter, `first` decodes the filter's columns and `rest` the
   * other projected columns, so `rest` can skip batches where no row passes; without one,
   * `first` is empty and `rest` decodes everything.
   */
  private case class FilePart(
      reader: LanceFileReader,
      first: Option[(FileScan, Seq[LanceField])],
      rest: Option[(FileScan, Seq[LanceField])]
  )

  private val filterColumns: Set[String] =
    if (filter == null) Set.empty else filter.evaluator.columns
  private val firstFields: Seq[LanceField] = if (filter == null) Nil else filter.fields
  private val restFields: Seq[LanceField] = fields.filterNot(f => filterColumns.contains(f.name))

  private val parts: Seq[FilePart] = {
    val opened = Seq.newBuilder[FilePart]
    try {
      fragment.files.foreach { df =>
        val first = firstFields.flatMap(restrictTo(_, df))
        val rest = restFields.flatMap(restrictTo(_, df))
        if (first.nonEmpty || rest.nonEmpty) {
          val reader = df.open(io)
          opened += (try {
            reader.planReads(first ++ rest, startRow, endRow)
            FilePart(
              reader,
              if (first.isEmpty) None else Some(reader.scan(first, startRow, endRow) -> first),
              if (rest.isEmpty) None else Some(reader.scan(rest, startRow, endRow) -> rest)
            )
          } catch { case e: Throwable => BestEffort.close(reader); throw e })
        }
      }
      opened.result()
    } catch {
      case e: Throwable => opened.result().foreach(p => BestEffort.close(p.reader)); throw e
    }
  }

  private val blobs: BlobBytes = if (fields.exists(BlobColumn.containsBlob)) {
    fields.foreach(checkBlobPlacement(_, inList = false))
    new BlobBytes(io, fragment)
  } else null

  private var position = startRow

  def remaining: Long = endRow - position

  private var lastStart = startRow
  private var lastKeep: Array[Int] = null

  /**
   * The physical offsets within the fragment of the rows the last [[next]] kept, in order,
   * written to `into` (which holds at least that many): what row addresses and row ids are
   * made of.
   */
  def keptOffsets(into: Array[Long], kept: Int): Unit = {
    var i = 0
    if (lastKeep == null) while (i < kept) { into(i) = lastStart + i; i += 1 }
    else while (i < kept) { into(i) = lastStart + lastKeep(i); i += 1 }
  }

  private var skipped = 0

  /** Rows the last [[next]] read but dropped as deleted or rejected by the filter. */
  def lastSkipped: Int = skipped

  private var skippedByIndex = false

  /**
   * Whether the last [[next]] skipped its rows undecoded: none was among the fragment's
   * `rowCandidates`.
   */
  def lastSkippedByIndex: Boolean = skippedByIndex

  /**
   * The next `n` physical rows, minus deleted ones and those the filter rejects: one array per
   * requested field, plus the number of rows kept. When no row is kept the arrays are absent
   * (an empty array) and the other columns were skipped, not decoded.
   */
  def next(n: Int): (Array[ColumnArray], Int) = next(n, Int.MaxValue)

  /**
   * As `next(n)`, keeping at most `maxKept` rows, for a reader that needs no more (a LIMIT).
   * Without a filter only the physical rows holding them are read, fewer than `n` when they
   * suffice ([[remaining]] tells); with one, all `n` rows are read and evaluated, and the rows
   * passing after the first `maxKept` are dropped before any column is taken or copied: the
   * reader moves past them.
   */
  def next(n: Int, maxKept: Int): (Array[ColumnArray], Int) = {
    require(maxKept > 0, s"maxKept must be positive, not $maxKept")
    if (filter == null && fragment.rowCandidates.isEmpty) read(rowsHolding(maxKept, n), maxKept)
    else read(n, maxKept)
  }

  /**
   * The physical rows from the current position, at most `n`, that hold `live` rows not
   * deleted: each deleted row before the end pushes the end one row further.
   */
  private def rowsHolding(live: Int, n: Int): Int = {
    if (live >= n) return n
    if (deletions.cardinality == 0) return live
    val it = deletions.deleted.getIntIterator
    it.advanceIfNeeded(position.toInt)
    var m = live
    while (m < n && it.hasNext && it.peekNext() - position < m) { it.next(); m += 1 }
    m
  }

  private def read(n: Int, maxKept: Int): (Array[ColumnArray], Int) = {
    skippedByIndex = fragment.rowCandidates.exists(_.rangeCardinality(
      position,
      position + n
    ) == 0)
    if (skippedByIndex) {
      // No row here can pass the filter or be asked for: its columns are not decoded at all.
      parts.foreach { p => p.first.foreach(_._1.skip(n)); p.rest.foreach(_._1.skip(n)) }
      skipped = n
      lastStart = position
      lastKeep = FragmentReader.NoRows
      position += n
      return (Array.empty, 0)
    }
    val firstDecoded = decode(n, _.first)
    val evaluated: Array[Boolean] = if (filter == null) null
    else {
      val byName = firstFields.map(f => f.name -> assemble(f, firstDecoded, n)).toMap
      filter.evaluator.evaluate(byName, n)
    }
    val passed = fragment.rowCandidates.fold(evaluated)(c => amongCandidates(c, n, evaluated))
    val allKept = keptRows(position, n, passed)
    val passing = if (allKept == null) n else allKept.length
    skipped = n - passing
    val keep =
      if (passing <= maxKept) allKept
      else if (allKept == null) Array.range(0, maxKept)
      else java.util.Arrays.copyOf(allKept, maxKept)
    lastStart = position
    lastKeep = keep
    position += n
    val kept = if (keep == null) n else keep.length
    if (kept == 0) {
      parts.foreach(_.rest.foreach(_._1.skip(n)))
      return (Array.empty, 0)
    }
    val restDecoded = decode(n, _.rest)
    val out = fields.map { f =>
      val arr = assemble(f, if (filterColumns.contains(f.name)) firstDecoded else restDecoded, n)
      val taken = if (keep == null) arr else ColumnArrays.take(arr, keep)
      if (blobs != null && BlobColumn.containsBlob(f)) blobs.materialize(f, taken) else taken
    }
    (out.toArray, kept)
  }

  private def decode(
      n: Int,
      which: FilePart => Option[(FileScan, Seq[LanceField])]
  ): Seq[scala.collection.Map[Int, ColumnArray]] =
    parts.flatMap(p => which(p)).map { case (scan, held) =>
      val byId = scala.collection.mutable.HashMap[Int, ColumnArray]()
      held.zip(if (sharedBatches) scan.nextShared(n) else scan.next(n))
        .foreach { case (f, a) => index(f, a, byId) }
      byId
    }

  /**
   * Row indices within the batch that survive deletion and the filter (`passed`, null when
   * there is no filter), or null when every row survives.
   */
  /**
   * `passed` (null: every row) narrowed to the rows of the next `n` among `candidates`: no
   * other row can pass the filter or was asked for.
   */
  private def amongCandidates(
      candidates: org.roaringbitmap.RoaringBitmap,
      n: Int,
      passed: Array[Boolean]
  ): Array[Boolean] = {
    if (candidates.rangeCardinality(position, position + n) == n) return passed
    val out = new Array[Boolean](n)
    val s = position.toInt
    val it = candidates.getIntIterator
    it.advanceIfNeeded(s)
    while (it.hasNext && it.peekNext() < s + n) {
      val i = it.next() - s
      out(i) = passed == null || passed(i)
    }
    out
  }

  private def keptRows(start: Long, n: Int, passed: Array[Boolean]): Array[Int] = {
    val anyDeleted =
      deletions.cardinality != 0 && deletions.deleted.rangeCardinality(start, start + n) != 0
    if (!anyDeleted && passed == null) return null
    if (!anyDeleted) {
      // Selective filters leave most batches empty: count before building the index list.
      var c = 0; var j = 0
      while (j < n) { c += (if (passed(j)) 1 else 0); j += 1 }
      if (c == 0) return FragmentReader.NoRows
      if (c == n) return null
    }
    val s = start.toInt
    // The deleted offsets of this range, walked once (not a bitmap lookup per row).
    val deleted = if (!anyDeleted) null
    else {
      val d = new Array[Boolean](n)
      val it = deletions.deleted.getIntIterator
      it.advanceIfNeeded(s)
      while (it.hasNext && it.peekNext() < s + n) d(it.next() - s) = true
      d
    }
    val kept = new Array[Int](n)
    var k = 0
    var i = 0
    if (deleted == null) {
      // Without branches: a filter passing one row in seven defeats the branch predictor.
      while (i < n) { kept(k) = i; k += (if (passed(i)) 1 else 0); i += 1 }
    } else {
      while (i < n) {
        if ((passed == null || passed(i)) && !deleted(i)) { kept(k) = i; k += 1 }
        i += 1
      }
    }
    if (k == n) null else java.util.Arrays.copyOf(kept, k)
  }

  /** Records `a` and, through structs, its children under their field ids. */
  private def index(
      f: LanceField,
      a: ColumnArray,
      into: scala.collection.mutable.HashMap[Int, ColumnArray]
  ): Unit = {
    into(f.id) = a
    a match {
      case s: StructArray if !BlobColumn.isBlob(f) =>
        f.children.zip(s.children).foreach { case (c, ca) => index(c, ca, into) }
      case _ =>
    }
  }

  /**
   * Combines the per-file reads of `f`: the first file holding it wins; struct children merge,
   * and a child no file holds reads as nulls.
   */
  private def assemble(
      f: LanceField,
      decoded: Seq[scala.collection.Map[Int, ColumnArray]],
      n: Int
  ): ColumnArray = {
    val found = decoded.flatMap(_.get(f.id))
    val structs = found.collect { case s: StructArray => s }
    if (found.isEmpty) new NullArray(n)
    else if (f.logicalType != LogicalType.Struct || BlobColumn.isBlob(f)) found.head
    // The whole struct in one file (the usual case): as decoded.
    else if (
      found.size == 1 && structs.size == 1 && structs.head.children.length == f.children.size
    )
      structs.head
    else {
      // Held by several files, or some children in none (fields added to the struct later,
      // pylance's add_columns): children merged by id, absent ones null.
      // A struct row is null only when every file holding the struct says so.
      val nulls = if (structs.exists(_.nulls == null)) null
      else Array.tabulate(n)(i => structs.forall(_.isNull(i)))
      new StructArray(n, nulls, f.children.map(assemble(_, decoded, n)).toArray)
    }
  }

  /** `f` pruned to the ids data file `df` holds, or None when it holds none of them. */
  private def restrictTo(f: LanceField, df: DataFileRef): Option[LanceField] = {
    // A blob column is one column, whatever logical children (blob v2 `data`, `uri`) it lists.
    if (f.children.isEmpty || BlobColumn.isBlob(f)) { if (df.holds(f.id)) Some(f) else None }
    else {
      val kids = f.children.flatMap(restrictTo(_, df))
      if (kids.isEmpty && !df.holds(f.id)) None
      // A packed struct (`lance-encoding:packed`) is one column under the struct's own id; the
      // manifest lists none of its children, yet that column holds them all.
      else if (f.logicalType == LogicalType.Struct && kids.isEmpty) Some(f)
      else if (f.logicalType == LogicalType.Struct) Some(f.copy(children = kids))
      else Some(f) // lists and maps come whole from one file
    }
  }

  /**
   * Blob columns may sit in structs, and blob v2 columns (2.2) in lists too. Blob v1 columns in
   * lists, which pylance 14.0.2 writes in 2.0/2.1 but cannot read back, are refused.
   */
  private def checkBlobPlacement(f: LanceField, inList: Boolean): Unit =
    if (BlobColumn.isBlob(f)) {
      if (inList && !BlobColumn.version(f).contains(BlobColumn.V2)) throw LanceErrors.unsupported(
        s"Blob column '${f.name}' (id ${f.id}) is a blob v1 column inside a list, which Lance " +
          "itself cannot read (blobs in lists need data_storage_version 2.2)"
      )
    } else {
      val list = f.logicalType match {
        case LogicalType.List | LogicalType.LargeList | LogicalType.Map | _: LogicalType.ListOfStruct =>
          true
        case _ => false
      }
      f.children.foreach(checkBlobPlacement(_, inList || list))
    }

  override def close(): Unit = {
    parts.foreach { p =>
      p.first.foreach(x => BestEffort.close(x._1)); p.rest.foreach(x => BestEffort.close(x._1));
      BestEffort.close(p.reader)
    }
    if (blobs != null) blobs.close()
  }
}

object FragmentReader {
  private val NoRows = new Array[Int](0)

  /**
   * A pushed predicate: its evaluator and the (top-level, primitive) fields it reads, which
   * need not be among the projected fields.
   */
  final case class Filter(evaluator: RowFilterEvaluator, fields: Seq[LanceField])
}
