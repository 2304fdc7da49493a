package io.sparklance.spark.aggregate

/**
 * A value per dictionary id, worked out once a batch: Spark's dictionary-encoded vectors get a
 * new dictionary with each batch, so what is known of an id holds for the current batch only.
 * Call [[newBatch]] before each batch. Used in hot loops: no allocation but when ids grow.
 */
private[aggregate] final class DictionaryMemo {
  private var values = new Array[Long](0)
  // The batch each id's value was worked out in; 0 = never (batches count from 1).
  private var stamps = new Array[Int](0)
  private var batch = 0

  def newBatch(): Unit = batch += 1

  /** Whether id `id` has a value in this batch. */
  def known(id: Int): Boolean = id < stamps.length && stamps(id) == batch

  /** The value of `id`; only when [[known]]. */
  def apply(id: Int): Long = values(id)

  def update(id: Int, v: Long): Unit = {
    if (id >= values.length) {
      val size = math.max(id + 1, values.length * 2)
      values = java.util.Arrays.copyOf(values, size)
      stamps = java.util.Arrays.copyOf(stamps, size)
    }
    values(id) = v
    stamps(id) = batch
  }
}
