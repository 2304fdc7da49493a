package io.sparklance.format.v20

import scala.jdk.CollectionConverters._

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.blob.BlobColumn
import io.sparklance.proto.EncodingsV20Protos.ArrayEncoding.ArrayEncodingCase

/**
 * A Lance 2.0 data file (footer 0.3 or 2.0). Every field of the schema tree has its own
 * column, pre-order: a struct is a column of empty `SimpleStruct` pages (or one `PackedStruct`
 * column holding its children), a list is an offsets column followed by its item's column, a
 * fixed-size list of a primitive is a single column.
 */
final class V20FileReader(
    val container: FileContainer,
    fileFields: FileFields,
    /** Batches of wide fixed-width values at least this large are read alone (see [[LeafFieldReader]]). */
    batchWindowMinBytes: Long = LeafFieldReader.BatchWindowMinBytes
) extends LanceFileReader {
  def path: String = container.path

  /** Dataset field id -> column index, from DataFile.fields / column_indices (tombstones skipped). */
  private val columnOf: Map[Int, Int] =
    V20FileReader.columnMap(fileFields, container.numColumns, path)

  lazy val numRows: Long = container.numRows

  def scan(fields: Seq[LanceField], startRow: Long, endRow: Long): FileScan = {
    if (startRow < 0 || endRow < startRow || endRow > numRows)
      throw new IllegalArgumentException(
        s"row range [$startRow, $endRow) is outside the $numRows rows of $path"
      )
    val readers = fields.map(build(_, topLevel = true)).toArray
    readers.foreach {
      case l: LeafFieldReader => l.limitTo(endRow)
      case st: StructFieldReader => st.limitTo(endRow)
      case b: BlobV1FieldReader => b.limitTo(endRow)
      case _ =>
    }
    readers.foreach(_.seek(startRow))
    new V20FileReader.Scan(readers, startRow, endRow, path)
  }

  private def build(field: LanceField, topLevel: Boolean): FieldReader =
    columnOf.get(field.id) match {
      case None => new MissingFieldReader
      case Some(col) =>
        val ctx = PageContext(path, field.name, field.id, col, 0)
        val pages = new ColumnPages(container, col, ctx)
        val oneBased = !field.logicalType.isInstanceOf[LogicalType.Dictionary]
        BlobColumn.version(field) match {
          case Some(BlobColumn.V1) =>
            // A blob v1 column: one packed struct<position: u64, size: u64> per row.
            new BlobV1FieldReader(new LeafFieldReader(
              pages,
              V20FileReader.BlobDescriptorShape,
              oneBased,
              Array(0, 1)
            ))
          case Some(v) =>
            throw LanceErrors.unsupported(
              s"Lance file $path: column '${field.name}' (id ${field.id}) is a blob v${v.number} " +
                "column, which Lance stores only in files of version 2.2 or later, not in a 2.0 file"
            )
          case None =>
            ValueShape.of(field) match {
              case s: ValueShape.Struct =>
                if (
                  pages.numPages > 0 && pages.encoding(
                    0
                  ).getArrayEncodingCase == ArrayEncodingCase.PACKED_STRUCT
                )
                  new LeafFieldReader(pages, s, oneBased, packedPositions(field))
                else new StructFieldReader(field.children.map(build(_, topLevel = false)).toArray)
              case ValueShape.VarList(item, itemShape) =>
                new ListFieldReader(pages, build(item, topLevel = false), itemShape)
              case shape =>
                // Top-level strings keep dictionary pages as ids; nested ones are materialised.
                new LeafFieldReader(
                  pages,
                  shape,
                  oneBased,
                  batchWindowMinBytes = batchWindowMinBytes,
                  keepStringDictionary = topLevel && shape == ValueShape.Var,
                  utf8 = V20FileReader.isUtf8(field.logicalType)
                )
            }
        }
    }

  /**
   * The columns of the field trees down through structs, whose children have one value per
   * row; not into lists or fixed-size lists of structs, whose pages count items. A struct's
   * own column (empty `SimpleStruct` pages) comes along with zero bytes.
   */
  def pageSpans(fields: Seq[LanceField]): Seq[ColumnPageSpans] = {
    val out = Seq.newBuilder[ColumnPageSpans]
    def walk(f: LanceField): Unit = {
      columnOf.get(f.id).foreach(col => out += container.pageSpans(col))
      if (f.logicalType == LogicalType.Struct && BlobColumn.version(f).isEmpty)
        f.children.foreach(walk)
    }
    fields.foreach(walk)
    out.result()
  }

  override def planReads(fields: Seq[LanceField], startRow: Long, endRow: Long): Unit =
    container.planReads(pageSpans(fields).map(_.column), startRow, endRow)

  /** Positions of the requested children among the packed struct's children in the file's own schema. */
  private def packedPositions(field: LanceField): Array[Int] = {
    val all = container.descriptor.getSchema.getFieldsList.asScala.filter(
      _.getParentId == field.id
    ).map(_.getId).toIndexedSeq
    field.children.map(c => all.indexOf(c.id)).toArray
  }

  def close(): Unit = container.input.close()
}

object V20FileReader {

  /** Whether values of `t` are strings (checked as UTF-8), dictionary-encoded or not. */
  def isUtf8(t: LogicalType): Boolean = t match {
    case LogicalType.Utf8 | LogicalType.LargeUtf8 => true
    case LogicalType.Dictionary(v, _, _) => isUtf8(v)
    case _ => false
  }

  /** How a 2.0 blob v1 column decodes: its packed descriptor struct. */
  private[v20] val BlobDescriptorShape
      : ValueShape.Struct = ValueShape.Struct(BlobColumn.V1Children.map { name =>
    LanceField(
      -1,
      -1,
      name,
      LogicalType.UInt64,
      nullable = false,
      Map.empty,
      Nil
    ) -> (ValueShape.Fixed(8, bool = false): ValueShape)
  })

  final class Scan(readers: Array[FieldReader], startRow: Long, endRow: Long, path: String)
      extends FileScan {
    private var row = startRow
    private def advance(n: Int): Unit = {
      if (n < 0 || n > endRow - row)
        throw new IllegalArgumentException(
          s"asked for $n rows but only ${endRow - row} remain in the scan of $path"
        )
      row += n
    }
    def next(n: Int): Array[ColumnArray] = { advance(n); readers.map(_.next(n)) }

    /** Repositions every reader: pages wholly skipped are never read, a page entered midway is read from there. */
    override def skip(n: Int): Unit = { advance(n); if (n > 0) readers.foreach(_.seek(row)) }
    def close(): Unit = ()
  }

  def columnMap(ff: FileFields, numColumns: Int, path: String): Map[Int, Int] = {
    val ids = ff.fieldIds
    val cols = ff.columnIndices
    if (cols.nonEmpty && cols.length != ids.length)
      throw LanceErrors.corruptFile(
        path,
        s"manifest lists ${ids.length} fields but ${cols.length} column indices"
      )
    val b = Map.newBuilder[Int, Int]
    var i = 0
    while (i < ids.length) {
      val id = ids(i)
      val col = if (cols.isEmpty) i else cols(i)
      if (id >= 0 && col >= 0) {
        if (col >= numColumns)
          throw LanceErrors.corruptFile(
            path,
            s"field id $id is mapped to column $col but the file has $numColumns columns"
          )
        b += id -> col
      }
      i += 1
    }
    b.result()
  }
}
