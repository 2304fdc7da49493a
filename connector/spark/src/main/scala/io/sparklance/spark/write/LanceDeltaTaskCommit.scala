package io.sparklance.spark.write

import org.apache.spark.sql.connector.write.WriterCommitMessage

import io.sparklance.table.commit.NewDataFile

/**
 * What one task of a DELETE, UPDATE or MERGE did: the rows it removed (row offsets per
 * fragment, from `_rowaddr`), the files of rows it rewrote with the stable row ids they keep
 * (in file order), the files of rows it inserted, and (a MERGE on a table with a primary
 * key) the keys it inserted, as a [[KeyBloom]]'s bytes.
 */
final case class LanceDeltaTaskCommit(
    removed: Map[Long, Array[Byte]],
    rewritten: Seq[(NewDataFile, Array[Long])],
    inserted: Seq[NewDataFile],
    insertedKeys: Option[Array[Byte]] = None
) extends WriterCommitMessage
