package io.sparklance.format.writer

import com.google.protobuf.ByteString

import io.sparklance.format.{LanceField, LogicalType, ValueShape}
import io.sparklance.format.blob.BlobColumn
import io.sparklance.proto.FileProtos

/** Lance fields to `lance.file.Field` protobufs, flattened pre-order, as the manifest and file descriptor store them. */
object SchemaProtos {

  /** Field metadata declaring an unenforced primary key (pylance 14), and its position. */
  val PrimaryKey = "lance-schema:unenforced-primary-key"
  val PrimaryKeyPosition = "lance-schema:unenforced-primary-key:position"

  def toProto(fields: Seq[LanceField]): Seq[FileProtos.Field] =
    fields.flatMap(_.preOrder).map(fieldProto)

  def fieldProto(f: LanceField): FileProtos.Field = {
    val b = FileProtos.Field.newBuilder()
      .setName(f.name)
      .setId(f.id)
      .setParentId(f.parentId)
      .setLogicalType(f.logicalType.text)
      .setNullable(f.nullable)
    encodingOf(f).foreach(b.setEncoding)
    f.metadata.foreach { case (k, v) => b.putMetadata(k, ByteString.copyFrom(v)) }
    // Lance mirrors the Arrow extension name into its own field (lance-file `From<&Field>`).
    f.metadataString(BlobColumn.ExtensionNameKey).foreach(b.setExtensionName)
    mirrorPrimaryKey(b, f.metadataString)
    b.build()
  }

  /** Mirrors the unenforced primary key declared in field metadata `md` into `b`'s booleans. */
  def mirrorPrimaryKey(b: FileProtos.Field.Builder, md: String => Option[String]): Unit = {
    b.clearUnenforcedPrimaryKey().clearUnenforcedPrimaryKeyPosition()
    if (md(PrimaryKey).exists(_.trim.equalsIgnoreCase("true"))) b.setUnenforcedPrimaryKey(true)
    md(PrimaryKeyPosition).flatMap(p => scala.util.Try(p.trim.toInt).toOption).foreach { p =>
      b.setUnenforcedPrimaryKey(true)
      if (p > 0) b.setUnenforcedPrimaryKeyPosition(p)
    }
  }

  /**
   * The fields as a data file's own schema lists them. In 2.2 a blob v2 column is stored as its
   * descriptor struct, and pylance's file schema says so: a struct marked
   * `lance-encoding:blob` and `lance-encoding:packed` whose five children carry no ids (-1).
   * Everything else is the dataset's field.
   */
  def fileFields(fields: Seq[LanceField], version: FileVersion): Seq[LanceField] =
    if (version.minor < 2) fields else fields.map(fileField)

  private def fileField(f: LanceField): LanceField =
    if (BlobColumn.version(f).contains(BlobColumn.V2)) {
      def child(name: String, t: LogicalType) =
        LanceField(-1, -1, name, t, nullable = false, Map.empty, Nil)
      val utf8 = (s: String) => s.getBytes("UTF-8")
      LanceField(
        f.id,
        f.parentId,
        f.name,
        LogicalType.Struct,
        f.nullable,
        Map(BlobColumn.BlobMetaKey -> utf8("true"), PackedKey -> utf8("true")),
        Seq(
          child("kind", LogicalType.UInt8),
          child("position", LogicalType.UInt64),
          child("size", LogicalType.UInt64),
          child("blob_id", LogicalType.UInt32),
          child("blob_uri", LogicalType.Utf8)
        )
      )
    } else if (f.children.isEmpty) f
    else f.copy(children = f.children.map(fileField))

  val PackedKey = "lance-encoding:packed"

  /** PLAIN for fixed width, lists and fixed-size lists; VAR_BINARY for strings and binaries; none for structs. */
  private def encodingOf(f: LanceField): Option[FileProtos.Encoding] = f.logicalType match {
    case LogicalType.Struct => None
    case LogicalType.List | LogicalType.LargeList | LogicalType.Map | _: LogicalType.ListOfStruct =>
      Some(FileProtos.Encoding.PLAIN)
    case t => ValueShape.ofType(t, f) match {
        case ValueShape.Var => Some(FileProtos.Encoding.VAR_BINARY)
        case _ => Some(FileProtos.Encoding.PLAIN)
      }
  }
}
