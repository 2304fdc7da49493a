package io.sparklance.table.commit

import scala.jdk.CollectionConverters._

import io.sparklance.proto.TableProtos

/**
 * A data file an executor wrote, as the driver needs it to commit: its name under `data/`,
 * which dataset fields it holds in which columns, its file version, size and row count.
 * Plain and serializable: it travels back to the driver inside a commit message.
 */
final case class NewDataFile(
    path: String,
    fieldIds: Array[Int],
    columnIndices: Array[Int],
    major: Int,
    minor: Int,
    sizeBytes: Long,
    rows: Long,
    /**
     * Managed blob objects written for this file's rows (paths relative to the dataset root):
     * not part of the commit, deleted with the file when its write fails.
     */
    blobObjects: Seq[String] = Nil
) {

  def toProto: TableProtos.DataFile =
    TableProtos.DataFile.newBuilder()
      .setPath(path)
      .addAllFields(fieldIds.map(Int.box).toSeq.asJava)
      .addAllColumnIndices(columnIndices.map(Int.box).toSeq.asJava)
      .setFileMajorVersion(major)
      .setFileMinorVersion(minor)
      .setFileSizeBytes(sizeBytes)
      .build()
}
