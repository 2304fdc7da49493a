package io.sparklance.format.writer

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.blob.{BlobSidecarWriter, BlobSidecars}
import io.sparklance.proto.FileProtos
import io.sparklance.storage.OutputSink

/** Options of the file writer. `pageBudgetBytes` bounds the values a column buffers before it writes a page. */
final case class FileWriterOptions(pageBudgetBytes: Long = FileWriterOptions.DefaultPageBudget)
object FileWriterOptions {
  val DefaultPageBudget: Long = 8L * 1024 * 1024
}
