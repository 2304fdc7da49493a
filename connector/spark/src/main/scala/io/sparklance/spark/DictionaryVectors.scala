package io.sparklance.spark

import org.apache.spark.sql.execution.vectorized.{Dictionary, WritableColumnVector}

import io.sparklance.format.{DictionaryArray, StringDictionary}

/**
 * Hands a [[DictionaryArray]] to Spark as Spark's own Parquet reader does with a dictionary
 * page: the ids go into the vector's dictionary-id child in one bulk copy and the vector gets a
 * [[Dictionary]], which `getUTF8String` / `getBinary` consult for the rows actually read. No
 * entry's bytes are copied per row.
 *
 * Vectors are reused across batches: a batch written without a dictionary must clear the one
 * a previous batch set (`clear`), or Spark would keep decoding stale ids.
 */
private[spark] object DictionaryVectors {

  def write(v: WritableColumnVector, a: DictionaryArray): Unit = {
    val ids = v.reserveDictionaryIds(a.length)
    ids.putInts(0, a.length, a.indices, 0)
    v.setDictionary(new EntriesDictionary(a.dictionary))
  }

  def clear(v: WritableColumnVector): Unit = if (v.hasDictionary) v.setDictionary(null)

  /**
   * Spark's view of a string dictionary: lookups return the entry's pre-split bytes (shared,
   * never copied; Spark treats them as read-only). Only the binary lookup applies to strings.
   */
  private final class EntriesDictionary(d: StringDictionary) extends Dictionary {
    private val entries: Array[Array[Byte]] = d.entries
    override def decodeToBinary(id: Int): Array[Byte] = entries(id)
    override def decodeToInt(id: Int): Int = unsupported("int")
    override def decodeToLong(id: Int): Long = unsupported("long")
    override def decodeToFloat(id: Int): Float = unsupported("float")
    override def decodeToDouble(id: Int): Double = unsupported("double")
    private def unsupported(what: String): Nothing =
      throw new UnsupportedOperationException(s"a string dictionary has no $what values")
  }
}
