package io.sparklance.format.writer

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.LanceErrors
import io.sparklance.format._
import io.sparklance.format.blob.{BlobSidecarWriter, BlobSidecars}
import io.sparklance.proto.FileProtos
import io.sparklance.storage.OutputSink

/** What a finished data file holds, as its `DataFile` entry in a manifest records it. */
final case class WrittenFile(
    fieldIds: Array[Int],
    columnIndices: Array[Int],
    numRows: Long,
    sizeBytes: Long,
    version: FileVersion
)
