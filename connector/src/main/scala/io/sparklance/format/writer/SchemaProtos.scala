package io.sparklance.format.writer

import com.google.protobuf.ByteString

import io.sparklance.format.{LanceField, LogicalType, ValueShape}
import io.sparklance.proto.FileProtos

/** Lance fields to `lance.file.Field` protobufs, flattened pre-order, as the manifest and file descriptor store them. */
object SchemaProtos {
  def toProto(fields: Seq[LanceField]): Seq[FileProtos.Field] = fields.flatMap(_.preOrder).map(fieldProto)

  def fieldProto(f: LanceField): FileProtos.Field = {
    val b = FileProtos.Field.newBuilder()
      .setName(f.name)
      .setId(f.id)
      .setParentId(f.parentId)
      .setLogicalType(f.logicalType.text)
      .setNullable(f.nullable)
    encodingOf(f).foreach(b.setEncoding)
    f.metadata.foreach { case (k, v) => b.putMetadata(k, ByteString.copyFrom(v)) }
    b.build()
  }

  /** PLAIN for fixed width, lists and fixed-size lists; VAR_BINARY for strings and binaries; none for structs. */
  private def encodingOf(f: LanceField): Option[FileProtos.Encoding] = f.logicalType match {
    case LogicalType.Struct => None
    case LogicalType.List | LogicalType.LargeList | LogicalType.Map | _: LogicalType.ListOfStruct => Some(FileProtos.Encoding.PLAIN)
    case t => ValueShape.ofType(t, f) match {
      case ValueShape.Var => Some(FileProtos.Encoding.VAR_BINARY)
      case _ => Some(FileProtos.Encoding.PLAIN)
    }
  }
}
