package io.sparklance.testutil

import java.nio.charset.StandardCharsets.UTF_8

import io.sparklance.format._

/** Small string and dictionary arrays for unit tests, and their values as Scala strings. */
object StringArrays {
  def dict(entries: String*): StringDictionary = {
    val bytes = entries.map(_.getBytes(UTF_8))
    new StringDictionary(new VarBinaryArray(
      bytes.size,
      null,
      bytes.scanLeft(0)(_ + _.length).toArray,
      bytes.flatten.toArray
    ))
  }

  /** Rows of `ids` into `d`, null where `ids(i) < 0` (stored as id 0, as decoders do). */
  def dictArray(d: StringDictionary, ids: Int*): DictionaryArray = {
    val nulls = ids.map(_ < 0).toArray
    new DictionaryArray(
      ids.size,
      if (nulls.contains(true)) nulls else null,
      ids.map(math.max(_, 0)).toArray,
      d
    )
  }

  def plain(values: Option[String]*): VarBinaryArray = {
    val bytes = values.map(_.getOrElse("").getBytes(UTF_8))
    val nulls = values.map(_.isEmpty).toArray
    new VarBinaryArray(
      values.size,
      if (nulls.contains(true)) nulls else null,
      bytes.scanLeft(0)(_ + _.length).toArray,
      bytes.flatten.toArray
    )
  }

  /** The values of a string array, whatever its kind. */
  def strings(a: ColumnArray): Seq[Option[String]] = {
    val v = ColumnArrays.materialize(a).asInstanceOf[VarBinaryArray]
    (0 until v.length).map(i =>
      if (v.isNull(i)) None
      else Some(new String(v.data, v.offsets(i), v.offsets(i + 1) - v.offsets(i), UTF_8))
    )
  }
}
