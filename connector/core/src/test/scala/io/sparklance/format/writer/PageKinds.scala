package io.sparklance.format.writer

import scala.jdk.CollectionConverters._

import io.sparklance.format.FileContainer
import io.sparklance.storage.FileIO

/**
 * What each page of a 2.1/2.2 file is, as "layout/value encoding" (with "+dict" for a
 * dictionary): e.g. "mini/rle", "mini/inline_bitpacking+dict", "const/value", "zip/fsst".
 */
object PageKinds {
  def apply(io: FileIO, path: String): Seq[String] = {
    import _root_.io.sparklance.proto.EncodingsV21Protos._
    val c = FileContainer.open(io.open(path))
    (0 until c.numColumns).flatMap { col =>
      c.column(col).getPagesList.asScala.map { p =>
        val l = PageLayout.parseFrom(
          com.google.protobuf.Any.parseFrom(p.getEncoding.getDirect.getEncoding).getValue
        )
        def name(e: CompressiveEncoding): String = e.getCompressionCase.toString.toLowerCase
        if (l.hasMiniBlockLayout) {
          val m = l.getMiniBlockLayout
          "mini/" + name(m.getValueCompression) + (if (m.hasDictionary) "+dict" else "")
        } else if (l.hasFullZipLayout) "zip/" + name(l.getFullZipLayout.getValueCompression)
        else if (l.hasConstantLayout) {
          val k = l.getConstantLayout
          "const/" + (if (k.hasInlineValue || p.getBufferOffsetsCount % 2 == 1) "value" else "null")
        } else l.getLayoutCase.toString
      }
    }
  }
}
