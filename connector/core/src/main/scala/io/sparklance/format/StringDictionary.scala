package io.sparklance.format

/**
 * The entries of a dictionary page of strings or binary (no nulls: null rows are marked in the
 * [[DictionaryArray]] using it). One object per decoded page dictionary, shared by every batch
 * sliced from that page, so per-entry work done once (`entries`) is done once per page.
 * Entries need not be distinct: a batch crossing pages gets the concatenation of their
 * dictionaries.
 */
final class StringDictionary(val values: VarBinaryArray) {
  require(values.nulls == null, "dictionary entries cannot be null")

  def size: Int = values.length

  /**
   * Each entry as its own array, split on first use: Spark's `Dictionary.decodeToBinary` hands
   * out a `byte[]` per lookup, and this makes that lookup an array read, with no copy per row.
   */
  lazy val entries: Array[Array[Byte]] = {
    val n = values.length
    val out = new Array[Array[Byte]](n)
    val off = values.offsets
    var i = 0
    while (i < n) { out(i) = java.util.Arrays.copyOfRange(values.data, off(i), off(i + 1)); i += 1 }
    out
  }
}

object StringDictionary {

  /**
   * The concatenation of `dicts` (distinct objects) and, for each, the id its entry 0 gets in
   * the result: ids of a batch that crosses pages are remapped by adding that base.
   */
  def concat(dicts: Seq[StringDictionary]): (StringDictionary, Array[Int]) = {
    if (dicts.size == 1) return (dicts.head, Array(0))
    val bases = dicts.scanLeft(0)(_ + _.size).toArray
    val merged = ColumnArrays.concat(dicts.map(_.values)).asInstanceOf[VarBinaryArray]
    (new StringDictionary(merged), bases)
  }
}
