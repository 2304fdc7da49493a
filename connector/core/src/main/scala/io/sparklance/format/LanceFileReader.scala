package io.sparklance.format

import io.sparklance.LanceErrors
import io.sparklance.storage.FileIO

/**
 * One Lance data file, of any supported version. Opening reads only the tail (footer,
 * offset tables, column metadata); scans then read only the pages of requested columns.
 */
trait LanceFileReader extends AutoCloseable {
  def path: String
  def numRows: Long

  /**
   * Rows `[startRow, endRow)` of `fields`. Each field is a dataset field, possibly pruned to
   * a subset of its children. A field (or child) whose id this file does not hold decodes
   * as all nulls.
   */
  def scan(fields: Seq[LanceField], startRow: Long, endRow: Long): FileScan

  /**
   * The pages of the columns holding `fields` whose pages count rows of the file (read from
   * the column metadata already in memory, no page is read). Columns whose pages count
   * something else (2.0 list items; 2.1/2.2 leaves under a fixed-size list of structs, whose
   * pages count items) are left out, as are fields this file does not hold.
   */
  def pageSpans(fields: Seq[LanceField]): Seq[ColumnPageSpans]

  /**
   * Those of top-level columns `fields` whose metadata in this file proves they hold no
   * null: every page says its items are all valid. Leaves out what it cannot tell (other
   * file versions, nested or blob columns, columns the file does not hold). Reads no page.
   */
  def provenNullFree(fields: Seq[LanceField]): Seq[LanceField] = Nil

  /**
   * Tells the storage which page buffers a scan of `fields` over rows `[startRow, endRow)` will
   * read (the columns of [[pageSpans]]), so that a remote store fetches nearby ones with one
   * request. Reads nothing; does nothing by default.
   */
  def planReads(fields: Seq[LanceField], startRow: Long, endRow: Long): Unit = ()
}

object LanceFileReader {

  /**
   * Opens `path`, written as file version `major.minor` according to the manifest
   * (`DataFile.file_major_version/file_minor_version`; (0,0) when an old manifest recorded
   * none). The footer's own version decides the reader and is checked against it:
   *   - footer 0.0..0.2: legacy (0.1) file; the manifest must say 0.x below 0.3;
   *   - footer 0.3 (standard 2.0 writer) or 2.0: the manifest must say 2.0 (or 0.3);
   *   - footer 2.1 / 2.2: structural reader; the manifest must say the same;
   *   - anything else (2.3 "next", unknown): unsupported.
   * Reads only the file's tail (one 64 KiB read for most files). With the file's size as the
   * manifest records it (`DataFile.file_size_bytes`, 0 when unknown), a v2 file is opened
   * once per JVM: later opens take its metadata from [[FileMetadataCache]] and read nothing
   * until a page is read (a legacy file is never kept).
   */
  def open(
      io: FileIO,
      path: String,
      major: Int,
      minor: Int,
      fields: FileFields,
      sizeBytes: Long = 0L
  ): LanceFileReader =
    FileContainer.held(io, path, sizeBytes) match {
      case Some(container) =>
        try {
          checkV2(path, major, minor, container.footer.major, container.footer.minor)
          open(container, fields)
        } catch { case e: Throwable => container.input.close(); throw e }
      case None => openRead(io, path, major, minor, fields, sizeBytes)
    }

  private def openRead(
      io: FileIO,
      path: String,
      major: Int,
      minor: Int,
      fields: FileFields,
      sizeBytes: Long
  ): LanceFileReader = {
    val input = io.open(path)
    try {
      val size = input.length
      if (size < 8) throw LanceErrors.corruptFile(
        path,
        s"file is only $size bytes, too short for a Lance footer"
      )
      val tail = input.read(
        size - math.min(size, FileContainer.TailBytes.toLong),
        math.min(size, FileContainer.TailBytes.toLong).toInt
      )
      val (fMajor, fMinor) = FileFooter.version(tail, path)
      val manifestLegacy = major == 0 && minor < 3
      (fMajor, fMinor) match {
        case (0, m) if m <= 2 =>
          if (!manifestLegacy) throw mismatch(path, major, minor, fMajor, fMinor)
          legacy.LegacyFileReader.open(input, tail, fields)
        case _ =>
          checkV2(path, major, minor, fMajor, fMinor)
          val container = FileContainer.open(input, tail)
          val reader = open(container, fields)
          FileContainer.keep(container, sizeBytes)
          reader
      }
    } catch {
      case e: Throwable => input.close(); throw e
    }
  }

  /** That the manifest's `major.minor` agrees with a v2 footer's version, which is known. */
  private def checkV2(path: String, major: Int, minor: Int, fMajor: Int, fMinor: Int): Unit = {
    val manifest20 = (major == 0 && minor == 3) || (major == 2 && minor == 0)
    (fMajor, fMinor) match {
      case (0, 3) | (2, 0) => if (!manifest20) throw mismatch(path, major, minor, fMajor, fMinor)
      case (2, m) if m == 1 || m == 2 =>
        if (major != 2 || minor != m) throw mismatch(path, major, minor, fMajor, fMinor)
      case _ => throw unknownVersion(path, fMajor, fMinor)
    }
  }

  private def mismatch(path: String, major: Int, minor: Int, fMajor: Int, fMinor: Int) =
    LanceErrors.corruptFile(
      path,
      s"the manifest records file version $major.$minor but the file's footer says $fMajor.$fMinor"
    )

  private def unknownVersion(path: String, major: Int, minor: Int) =
    LanceErrors.unsupported(
      s"Lance file $path has an unstable or unknown Lance file version $major.$minor " +
        "(supported: 0.1 legacy, 2.0, 2.1, 2.2); rewrite the dataset with a stable " +
        "data_storage_version"
    )

  /**
   * A reader over the container of a v2 file no manifest describes (an index file), already
   * open: its footer names its version. Closing the reader closes the container's input.
   */
  def open(container: FileContainer, fields: FileFields): LanceFileReader =
    (container.footer.major, container.footer.minor) match {
      case (0, 3) | (2, 0) => new v20.V20FileReader(container, fields)
      case (2, m) if m == 1 || m == 2 => new StructuralFile(container, fields, m)
      case (major, minor) => throw unknownVersion(container.path, major, minor)
    }

  /** Opens a file no manifest describes (an index file): its own footer names its version. */
  def openStandalone(io: FileIO, path: String, fields: FileFields): LanceFileReader = {
    val input = io.open(path)
    val (major, minor) =
      try {
        val size = input.length
        val n = math.min(size, FileContainer.TailBytes.toLong)
        if (size < 8) throw LanceErrors.corruptFile(
          path,
          s"file is only $size bytes, too short " +
            "for a Lance footer"
        )
        FileFooter.version(input.read(size - n, n.toInt), path)
      } finally input.close()
    open(io, path, major, minor, fields)
  }

  /** 2.1 / 2.2 files: the container is read here, the pages by the structural reader. */
  private final class StructuralFile(container: FileContainer, fileFields: FileFields, minor: Int)
      extends LanceFileReader {
    def path: String = container.path
    lazy val numRows: Long = container.numRows
    def scan(fields: Seq[LanceField], startRow: Long, endRow: Long): FileScan =
      structural.StructuralFileReader.scan(container, fields, fileFields, minor, startRow, endRow)
    def pageSpans(fields: Seq[LanceField]): Seq[ColumnPageSpans] =
      structural.StructuralFileReader.pageSpans(container, fields, fileFields)
    override def provenNullFree(fields: Seq[LanceField]): Seq[LanceField] =
      structural.StructuralFileReader.provenNullFree(container, fields, fileFields)
    override def planReads(fields: Seq[LanceField], startRow: Long, endRow: Long): Unit =
      container.planReads(pageSpans(fields).map(_.column), startRow, endRow)
    def close(): Unit = container.input.close()
  }
}
