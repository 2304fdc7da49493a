package io.sparklance.table.maintenance

import scala.collection.mutable

import io.sparklance.LanceErrors
import io.sparklance.format.{ColumnArray, ColumnArrays, LanceField}
import io.sparklance.format.blob.BlobColumn
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.storage.{BestEffort, FileIO, Paths, StreamSink}
import io.sparklance.table.{
  DatasetLayout,
  DeletionVector,
  FragmentLineage,
  FragmentReader,
  FragmentRef,
  Snapshot
}
import io.sparklance.table.commit.{DataFileNames, NewDataFile, NewFragment}

/**
 * One new fragment a compaction task wrote, and with stable row ids the lineage of its rows
 * (row ids, created-at and last-updated-at versions), carried from the old fragments.
 */
final case class CompactedFragment(
    fragment: NewFragment,
    rowIds: Array[Long],
    createdAt: Array[Long],
    updatedAt: Array[Long]
)
