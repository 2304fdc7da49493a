package io.sparklance.spark.write

import org.apache.spark.sql.connector.write._

import io.sparklance.format.LanceField
import io.sparklance.format.blob.BlobSidecars
import io.sparklance.format.writer._
import io.sparklance.storage.SerializableConf
import io.sparklance.table.RowFilter
import io.sparklance.table.commit.DataFileNames

/** Everything a task needs to write its files. */
final case class TaskPlan(
    root: String,
    fields: Seq[LanceField],
    sparkTypes: Seq[org.apache.spark.sql.types.DataType],
    ordinals: Seq[Int],
    version: FileVersion,
    options: LanceWriteOptions,
    conf: SerializableConf,
    /** Carried in every data file name of this job (see [[DataFileNames]]). */
    jobToken: String,
    /** Every row written must satisfy this (an overwrite by condition), named by `mustMatchText`. */
    mustMatch: Option[RowFilter] = None,
    mustMatchText: String = "",
    /** Blobs that leave the data files are managed objects under `_blobs/` (see [[BlobSidecars]]). */
    managedBlobs: Boolean = false,
    /** The dataset's non-root base paths (id, path): where external blob URIs may be relative. */
    externalBases: Seq[(Int, String)] = Nil
)
