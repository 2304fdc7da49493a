package io.sparklance.table

import com.google.protobuf.ByteString

import io.sparklance.LanceErrors
import io.sparklance.proto.{RowIdProtos, TableProtos}

/**
 * A fragment's row lineage as its manifest entry records it, carried to the tasks that read
 * the fragment when a scan asks for row ids or row versions: the stable row id sequence
 * and the created-at / last-updated-at version sequences (empty when absent).
 */
final case class FragmentLineage(
    rowIds: Array[Byte],
    createdAt: Array[Byte],
    updatedAt: Array[Byte]
) {

  /** The stable row id of every physical row, or None without stable row ids. */
  def decodeRowIds(): Option[Array[Long]] =
    if (rowIds.isEmpty) None
    else Some(RowIdSequences.decode(RowIdProtos.RowIdSequence.parseFrom(rowIds)))

  def decodeCreatedAt(rows: Int): Array[Long] =
    RowIdSequences.versions(ByteString.copyFrom(createdAt), rows, 1L)

  def decodeUpdatedAt(rows: Int): Array[Long] =
    RowIdSequences.versions(ByteString.copyFrom(updatedAt), rows, 1L)
}

object FragmentLineage {
  def of(f: TableProtos.DataFragment): FragmentLineage = {
    if (
      f.hasExternalRowIds || f.hasColumnRowIds || f.hasExternalCreatedAtVersions ||
      f.hasExternalLastUpdatedAtVersions || f.hasColumnCreatedAtVersions ||
      f.hasColumnLastUpdatedAtVersions
    )
      throw LanceErrors.unsupported(s"fragment ${f.getId} keeps its row lineage outside the " +
        "manifest, which this connector does not read yet")
    FragmentLineage(
      f.getInlineRowIds.toByteArray,
      f.getInlineCreatedAtVersions.toByteArray,
      f.getInlineLastUpdatedAtVersions.toByteArray
    )
  }
}
