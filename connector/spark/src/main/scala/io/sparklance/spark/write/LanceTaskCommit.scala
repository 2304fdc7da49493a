package io.sparklance.spark.write

import org.apache.spark.sql.connector.write._

import io.sparklance.table.commit.NewDataFile

/** What one task wrote: its data files, in order. */
final case class LanceTaskCommit(files: Seq[NewDataFile], requests: Long = 0L)
    extends WriterCommitMessage
