package io.sparklance.format.v20

import io.sparklance.format.{FileContainer, PageContext}
import io.sparklance.proto.{EncodingsV20Protos, File2Protos}

/** Unwraps the `Encoding` oneof of a 2.0 page into its `ArrayEncoding`. */
object EncodingUnwrap {
  private val ArrayEncodingUrl = "lance.encodings.ArrayEncoding"

  def arrayEncoding(
      enc: File2Protos.Encoding,
      ctx: PageContext,
      container: FileContainer
  ): EncodingsV20Protos.ArrayEncoding = {
    val anyBytes: Array[Byte] = enc.getLocationCase match {
      case File2Protos.Encoding.LocationCase.DIRECT => enc.getDirect.getEncoding.toByteArray
      case File2Protos.Encoding.LocationCase.INDIRECT =>
        val d = enc.getIndirect
        ctx.check(
          d.getBufferLocation >= 0 && d.getBufferLength >= 0 && d.getBufferLocation + d.getBufferLength <= container.fileSize &&
            d.getBufferLength < Int.MaxValue,
          s"deferred encoding at (${d.getBufferLocation}, ${d.getBufferLength}) lies outside the file"
        )
        container.input.read(d.getBufferLocation, d.getBufferLength.toInt)
      case other => throw ctx.corrupt(s"page has no encoding ($other)")
    }
    try {
      val any = com.google.protobuf.Any.parseFrom(anyBytes)
      val url = any.getTypeUrl
      if (!url.endsWith(ArrayEncodingUrl))
        throw ctx.corrupt(s"page encoding is '$url', expected a 2.0 ArrayEncoding")
      EncodingsV20Protos.ArrayEncoding.parseFrom(any.getValue)
    } catch {
      case e: com.google.protobuf.InvalidProtocolBufferException =>
        throw ctx.corrupt(s"page encoding does not decode: ${e.getMessage}", e)
    }
  }
}
