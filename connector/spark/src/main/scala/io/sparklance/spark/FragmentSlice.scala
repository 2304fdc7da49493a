package io.sparklance.spark

import scala.collection.mutable.ArrayBuffer

import org.apache.spark.broadcast.Broadcast

import io.sparklance.format.{ColumnPageSpans, LanceField}
import io.sparklance.storage.FileIO
import io.sparklance.table.{DataFileRef, FragmentRef, RowCounts}

/** A range of physical rows `[start, end)` of one fragment. */
final case class FragmentSlice(fragment: FragmentRef, start: Long, end: Long)
