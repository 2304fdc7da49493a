package io.sparklance.table.commit

import io.sparklance.proto.TableProtos

/** A fragment to add: one data file holding every column (ids are assigned at commit). */
final case class NewFragment(file: NewDataFile) {
  def rows: Long = file.rows

  def toProto(id: Long): TableProtos.DataFragment =
    TableProtos.DataFragment.newBuilder()
      .setId(id)
      .addFiles(file.toProto)
      .setPhysicalRows(file.rows)
      .build()
}
