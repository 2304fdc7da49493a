package io.sparklance.storage.s3

import java.io.ByteArrayInputStream
import javax.xml.parsers.DocumentBuilderFactory

import org.w3c.dom.{Element, Node}

/** The parts of S3's XML responses the storage layer reads: listings and multipart ids. */
object S3Xml {

  /** One object of a listing: its key, size and last-modified time (epoch millis). */
  final case class ListedObject(key: String, size: Long, modified: Long)

  /** One page of ListObjectsV2: objects, common prefixes, and the token of the next page. */
  final case class ListPage(objects: Seq[ListedObject], prefixes: Seq[String], next: Option[String])

  private def parse(bytes: Array[Byte]): Element = {
    val f = DocumentBuilderFactory.newInstance()
    f.setNamespaceAware(false)
    f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true)
    f.setExpandEntityReferences(false)
    f.newDocumentBuilder().parse(new ByteArrayInputStream(bytes)).getDocumentElement
  }

  private def children(e: Element, name: String): Seq[Element] = {
    val out = Seq.newBuilder[Element]
    var n = e.getFirstChild
    while (n != null) {
      if (n.getNodeType == Node.ELEMENT_NODE && n.getNodeName == name)
        out += n.asInstanceOf[Element]
      n = n.getNextSibling
    }
    out.result()
  }

  private def text(e: Element, name: String): Option[String] =
    children(e, name).headOption.map(_.getTextContent)

  def listPage(bytes: Array[Byte]): ListPage = {
    val root = parse(bytes)
    val objects = children(root, "Contents").map { c =>
      ListedObject(
        text(c, "Key").getOrElse(""),
        text(c, "Size").map(_.trim.toLong).getOrElse(0L),
        text(c, "LastModified").map(t => java.time.Instant.parse(t.trim).toEpochMilli)
          .getOrElse(0L)
      )
    }
    val prefixes = children(root, "CommonPrefixes").flatMap(p => text(p, "Prefix"))
    val truncated = text(root, "IsTruncated").exists(_.trim.equalsIgnoreCase("true"))
    ListPage(objects, prefixes, if (truncated) text(root, "NextContinuationToken") else None)
  }

  def uploadId(bytes: Array[Byte]): String =
    text(parse(bytes), "UploadId").getOrElse(
      throw new java.io.IOException("S3 CreateMultipartUpload answered without an UploadId")
    )

  /** The body of CompleteMultipartUpload for parts numbered from 1 with their ETags. */
  def completeBody(etags: Seq[String]): Array[Byte] = {
    val sb = new StringBuilder("<CompleteMultipartUpload>")
    etags.zipWithIndex.foreach { case (t, i) =>
      sb.append(s"<Part><PartNumber>${i + 1}</PartNumber><ETag>")
        .append(t.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))
        .append("</ETag></Part>")
    }
    sb.append("</CompleteMultipartUpload>").toString.getBytes(
      java.nio.charset.StandardCharsets.UTF_8
    )
  }
}
