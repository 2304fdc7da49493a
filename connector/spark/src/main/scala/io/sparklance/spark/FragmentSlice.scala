package io.sparklance.spark

import io.sparklance.table.FragmentRef

/** A range of physical rows `[start, end)` of one fragment. */
final case class FragmentSlice(fragment: FragmentRef, start: Long, end: Long)
