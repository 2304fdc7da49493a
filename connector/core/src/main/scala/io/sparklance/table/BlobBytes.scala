package io.sparklance.table

import io.sparklance.{LanceErrors, LanceException}
import io.sparklance.format._
import io.sparklance.format.blob.{BlobColumn, BlobDescriptors, BlobKind, BlobPaths}
import io.sparklance.storage.{BestEffort, FileIO, Paths, RandomAccessInput}

/**
 * Turns the blob descriptors a file reader decoded (see [[BlobColumn]]) into the blobs' bytes,
 * one batch at a time, as pylance's `take_blobs` would return them: null stays null, empty
 * stays empty.
 *
 * Only rows that survived deletion are passed in, and only projected columns, so nothing else
 * is read. Reads are ranged: the rows of one batch are grouped by the file holding their bytes,
 * sorted by offset, and neighbouring ranges (gaps up to [[BlobBytes.CoalesceGap]]) are read
 * together, up to [[BlobBytes.MaxCoalesced]] bytes per read; a range larger than that is one read
 * straight into the output.
 */
final class BlobBytes(io: FileIO, fragment: FragmentRef) {
  import BlobBytes._

  /**
   * `array`, the decoded values of requested field `f`, with every blob column in it (`f` itself
   * or struct children) replaced by its bytes.
   */
  def materialize(f: LanceField, array: ColumnArray): ColumnArray = BlobColumn.version(f) match {
    case Some(v) => array match {
        case _: NullArray => array
        // Legacy (0.1) files store blob fields as plain binary: the bytes themselves.
        case _: VarBinaryArray if legacyFile(f) => array
        case _ => resolve(
            f,
            v,
            BlobDescriptors.of(array, v, s"${fileOf(f).path} (blob column '${f.name}', id ${f.id})")
          )
      }
    case None => array match {
        case s: StructArray
            if f.logicalType == LogicalType.Struct && f.children.exists(BlobColumn.containsBlob) =>
          val kids = s.children.clone()
          f.children.zipWithIndex.foreach { case (c, i) =>
            if (i < kids.length) kids(i) = materialize(c, kids(i))
          }
          new StructArray(s.length, s.nulls, kids)
        // Blobs in lists (2.2): the items (blobs, or structs holding blobs) resolved as a column.
        case l: ListArray if f.logicalType.isVariableList =>
          f.children.headOption.filter(BlobColumn.containsBlob)
            .map(item => new ListArray(l.length, l.nulls, l.offsets, materialize(item, l.child)))
            .getOrElse(array)
        case _ => array
      }
  }

  private def legacyFile(f: LanceField): Boolean = {
    val df = fileOf(f); df.major == 0 && df.minor < 3
  }

  private def fileOf(f: LanceField): DataFileRef =
    fragment.files.find(_.holds(f.id)).getOrElse(
      throw new IllegalStateException(
        s"blob column '${f.name}' (id ${f.id}) decoded from no data file of fragment ${fragment.id}"
      )
    )

  private def resolve(
      f: LanceField,
      version: BlobColumn.Version,
      d: BlobDescriptors
  ): VarBinaryArray = {
    val n = d.length
    val dataFile = fileOf(f)
    def column = s"blob column '${f.name}' (id ${f.id}) of fragment ${fragment.id}"
    // Where each row's bytes are: source path, offset, length (-1: to the end of the object).
    val sources = new Array[String](n)
    val offsets = new Array[Long](n)
    val lengths = new Array[Long](n)
    var i = 0
    while (i < n) {
      if (!d.isNull(i)) {
        val pos = d.positions(i); val size = d.sizes(i)
        if (pos < 0 || size < 0)
          throw LanceErrors.corruptFile(
            dataFile.path,
            s"$column row $i has blob position $pos and size $size beyond 2^63"
          )
        val kind = if (version == BlobColumn.V1) BlobKind.Inline else d.kinds(i)
        kind match {
          case BlobKind.Inline => sources(i) = dataFile.path
          case BlobKind.Packed | BlobKind.Dedicated =>
            sources(i) = BlobPaths.sidecar(dataFile.path, d.blobIds(i))
          case BlobKind.External => sources(i) = externalPath(d.uri(i), d.blobIds(i), column)
          case BlobKind.Managed =>
            sources(i) = join(
              dataFile.baseId.map(id => base(id, column)).getOrElse(fragment.blobRoots.datasetRoot),
              managedPath(d.uri(i), column, dataFile.path)
            )
          case BlobKind.ManagedWithBase =>
            sources(i) =
              join(base(d.blobIds(i), column), managedPath(d.uri(i), column, dataFile.path))
          case other =>
            throw LanceErrors.unsupported(
              s"Lance $column row $i has blob kind $other, which this connector does not know " +
                s"(known: 0-5, ${(0 to 5).map(BlobKind.name).mkString(", ")}); it was written by a newer Lance"
            )
        }
        offsets(i) = pos
        // External blobs of size 0 stand for the whole object from `position` on.
        lengths(i) = if (size == 0 && kind == BlobKind.External) -1L else size
      }
      i += 1
    }
    read(d, sources, offsets, lengths, column)
  }

  /**
   * Handles of the fragment's own data files (inline blobs), kept open across batches; sidecar
   * and external files are opened per batch (a dedicated blob is a file of its own).
   */
  private val dataFileInputs = scala.collection.mutable.HashMap[String, RandomAccessInput]()
  private val dataFilePaths: Set[String] = fragment.files.map(_.path).toSet

  def close(): Unit = {
    dataFileInputs.values.foreach(BestEffort.close)
    dataFileInputs.clear()
  }

  /** Reads every row's range, grouped by source file, into one output array. */
  private def read(
      d: BlobDescriptors,
      sources: Array[String],
      offsets: Array[Long],
      lengths: Array[Long],
      column: => String
  ): VarBinaryArray = {
    val n = d.length
    // Rows with bytes to read, grouped by source: `order` holds them source by source,
    // group g being order[groupStart(g), groupStart(g + 1)).
    val groupOf = new java.util.HashMap[String, Integer]()
    val paths = scala.collection.mutable.ArrayBuffer[String]()
    val group = new Array[Int](n)
    var counts = new Array[Int](4)
    var i = 0
    while (i < n) {
      group(i) = -1
      val src = sources(i)
      if (src != null && lengths(i) != 0) {
        var g = groupOf.get(src)
        if (g == null) {
          g = paths.size; groupOf.put(src, g); paths += src;
          if (paths.size > counts.length)
            counts = java.util.Arrays.copyOf(counts, counts.length * 2)
        }
        group(i) = g
        counts(g) += 1
      }
      i += 1
    }
    val groups = paths.size
    val groupStart = new Array[Int](groups + 1)
    var g = 0
    while (g < groups) { groupStart(g + 1) = groupStart(g) + counts(g); g += 1 }
    val fill = java.util.Arrays.copyOf(groupStart, groups)
    val order = new Array[Int](groupStart(groups))
    i = 0
    while (i < n) { val gi = group(i); if (gi >= 0) { order(fill(gi)) = i; fill(gi) += 1 }; i += 1 }

    val opened = scala.collection.mutable.ArrayBuffer[RandomAccessInput]()
    try {
      val inputs = paths.map { path =>
        if (dataFilePaths.contains(path)) dataFileInputs.getOrElseUpdate(path, open(path, column))
        else { val in = open(path, column); opened += in; in }
      }
      // Resolve open-ended lengths and check every range against its file.
      g = 0
      while (g < groups) {
        val in = inputs(g); val len = in.length
        var k = groupStart(g)
        while (k < groupStart(g + 1)) {
          val r = order(k)
          if (lengths(r) < 0) lengths(r) = math.max(0L, len - offsets(r))
          if (offsets(r) > len || lengths(r) > len - offsets(r))
            throw LanceErrors.corruptFile(
              paths(g),
              s"$column row $r: blob bytes [${offsets(r)}, +${lengths(r)}) lie outside " +
                s"the file of $len bytes"
            )
          k += 1
        }
        g += 1
      }
      val outOffsets = new Array[Int](n + 1)
      var total = 0L
      i = 0
      while (i < n) {
        if (sources(i) != null) total += lengths(i)
        if (total > MaxBatchBytes)
          throw LanceErrors.unsupported(
            s"Lance $column: the blobs of one batch exceed 2 GiB (row $i reaches $total bytes), " +
              "more than a Spark binary column vector holds; read with a smaller batch_size option"
          )
        outOffsets(i + 1) = total.toInt
        i += 1
      }
      val data = new Array[Byte](total.toInt)
      g = 0
      while (g < groups) {
        readRanges(
          inputs(g),
          order,
          groupStart(g),
          groupStart(g + 1),
          offsets,
          lengths,
          outOffsets,
          data
        )
        g += 1
      }
      new VarBinaryArray(n, d.nulls, outOffsets, data)
    } finally opened.foreach(BestEffort.close)
  }

  private def open(path: String, column: => String): RandomAccessInput =
    try io.open(path)
    catch {
      case e: LanceException => throw e
      case e: java.io.FileNotFoundException =>
        throw LanceErrors.corruptFile(
          path,
          s"$column: the file holding blob bytes does not exist (${e.getMessage})",
          e
        )
      case e: java.io.IOException =>
        throw LanceErrors.unsupported(
          s"Lance $column: cannot open blob bytes at $path: ${e.getClass.getSimpleName}: ${e.getMessage}"
        )
    }

  /** The absolute path of an external blob: `uri` itself (base 0), or `uri` under base path `baseId`. */
  private def externalPath(uri: String, baseId: Int, column: => String): String = {
    if (uri.isEmpty) throw LanceErrors.corruptFile(
      fragment.blobRoots.datasetRoot,
      s"$column: an external blob has an empty URI"
    )
    if (baseId != 0) join(base(baseId, column), uri)
    else {
      val scheme = schemeOf(uri)
      if (scheme.isEmpty && !uri.startsWith("/"))
        throw LanceErrors.unsupported(
          s"Lance $column: external blob URI '$uri' is neither absolute nor relative to a base path"
        )
      if (scheme.contains("memory"))
        throw LanceErrors.unsupported(
          s"Lance $column: external blob URI '$uri' names in-process memory storage, which only " +
            "the writing process can read"
        )
      uri
    }
  }

  private def base(id: Int, column: => String): String =
    fragment.blobRoots.bases.getOrElse(
      id,
      throw LanceErrors.corruptFile(
        fragment.blobRoots.datasetRoot,
        s"$column names base path $id, which the manifest does not define"
      )
    )
}

object BlobBytes {

  /** Ranges closer than this are read together (one request beats two on object stores). */
  val CoalesceGap: Long = 64L * 1024

  /** Upper bound of one coalesced read; larger single blobs are read alone, straight into the output. */
  val MaxCoalesced: Long = 8L * 1024 * 1024
  private val MaxBatchBytes: Long = Int.MaxValue - 16L

  /** Lower-case URI scheme of `s` ("file", "s3a", ...), or None for a plain path. */
  private[table] def schemeOf(s: String): Option[String] = {
    val colon = s.indexOf(':')
    val slash = s.indexOf('/')
    if (
      colon > 1 && (slash < 0 || colon < slash) && s.substring(0, colon).forall(c =>
        c.isLetterOrDigit || c == '+' || c == '-' || c == '.'
      )
    )
      Some(s.substring(0, colon).toLowerCase(java.util.Locale.ROOT))
    else scala.None
  }

  private def join(root: String, rel: String): String =
    Paths.join(Paths.stripTrailingSlash(root), rel)

  /**
   * A managed blob's `blob_uri`: a canonical relative object path (pylance's
   * `validate_managed_reference`): no leading or trailing '/', no empty, '.' or '..' part, no
   * scheme, no backslash. Anything else is a corrupt descriptor.
   */
  private def managedPath(uri: String, column: => String, file: String): String = {
    val ok = uri.nonEmpty && !uri.startsWith("/") && !uri.endsWith("/") && !uri.contains(
      "://"
    ) && !uri.contains("\\") &&
      uri.split("/", -1).forall(p => p.nonEmpty && p != "." && p != "..")
    if (!ok) throw LanceErrors.corruptFile(
      file,
      s"$column: managed blob URI '$uri' is not a canonical relative path"
    )
    uri
  }

  /**
   * Reads rows `order[from, until)` (all of one source) into `data` at `outOffsets`, by offset
   * (the slice of `order` is sorted in place), neighbours merged into one read while the gap is
   * at most [[CoalesceGap]] and the read stays within [[MaxCoalesced]]; a lone range is read
   * straight into `data`.
   */
  private def readRanges(
      in: RandomAccessInput,
      order: Array[Int],
      from: Int,
      until: Int,
      offsets: Array[Long],
      lengths: Array[Long],
      outOffsets: Array[Int],
      data: Array[Byte]
  ): Unit = {
    sortByOffset(order, from, until, offsets)
    var a = from
    while (a < until) {
      val start = offsets(order(a))
      var end = start + lengths(order(a))
      var b = a + 1
      while (
        b < until && offsets(order(b)) <= end + CoalesceGap &&
        math.max(end, offsets(order(b)) + lengths(order(b))) - start <= MaxCoalesced
      ) {
        end = math.max(end, offsets(order(b)) + lengths(order(b)))
        b += 1
      }
      if (b == a + 1) {
        val r = order(a)
        in.readInto(start, data, outOffsets(r), lengths(r).toInt)
      } else {
        val buf = in.read(start, (end - start).toInt)
        var k = a
        while (k < b) {
          val r = order(k)
          System.arraycopy(buf, (offsets(r) - start).toInt, data, outOffsets(r), lengths(r).toInt)
          k += 1
        }
      }
      a = b
    }
  }

  /**
   * Sorts `order[from, until)` by `offsets`. Blobs are usually written in row order, so an
   * already sorted run is detected and left alone; otherwise an insertion sort for short runs,
   * a boxed sort for long ones.
   */
  private def sortByOffset(order: Array[Int], from: Int, until: Int, offsets: Array[Long]): Unit = {
    var k = from + 1
    while (k < until && offsets(order(k - 1)) <= offsets(order(k))) k += 1
    if (k >= until) return
    if (until - from <= 64) {
      var i = from + 1
      while (i < until) {
        val r = order(i); val key = offsets(r)
        var j = i - 1
        while (j >= from && offsets(order(j)) > key) { order(j + 1) = order(j); j -= 1 }
        order(j + 1) = r
        i += 1
      }
    } else {
      val sorted = order.slice(from, until).sortBy(r => offsets(r))
      System.arraycopy(sorted, 0, order, from, sorted.length)
    }
  }
}
