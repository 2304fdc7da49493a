package io.sparklance.spark

import org.apache.spark.broadcast.Broadcast

/**
 * One Spark partition: slices read one after the other, keeping the rows that pass the row
 * filter. The filter travels with the partition rather than the reader factory because a
 * runtime filter (dynamic pruning) arrives after Spark may have made the factory. A large
 * filter (the join keys of dynamic pruning: hundreds of thousands of values) travels as a
 * broadcast (`shared`), sent to each executor once rather than with every task.
 */
final case class LanceInputPartition(
    slices: Array[FragmentSlice],
    filter: Option[LanceColumnarReader.FilterSpec] = None,
    shared: Option[Broadcast[LanceColumnarReader.FilterSpec]] = None
) extends org.apache.spark.sql.connector.read.InputPartition {
  def rowFilter: Option[LanceColumnarReader.FilterSpec] = filter.orElse(shared.map(_.value))
}
