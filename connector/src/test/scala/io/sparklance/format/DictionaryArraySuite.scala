package io.sparklance.format

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

/**
 * Row operations on dictionary arrays: whatever take / slice / concat do (keep the ids, remap
 * them into a merged dictionary, or fall back to bytes), the values must be those of the same
 * operation on the plain bytes.
 */
class DictionaryArraySuite extends AnyFunSuite {
  private def dict(entries: String*): StringDictionary = {
    val bytes = entries.map(_.getBytes(UTF_8))
    new StringDictionary(new VarBinaryArray(bytes.size, null, bytes.scanLeft(0)(_ + _.length).toArray, bytes.flatten.toArray))
  }

  /** Rows of `ids` into `d`, null where `ids(i) < 0` (stored as id 0, as decoders do). */
  private def array(d: StringDictionary, ids: Int*): DictionaryArray = {
    val nulls = ids.map(_ < 0).toArray
    new DictionaryArray(ids.size, if (nulls.contains(true)) nulls else null, ids.map(math.max(_, 0)).toArray, d)
  }

  private def plain(values: Option[String]*): VarBinaryArray = {
    val bytes = values.map(_.getOrElse("").getBytes(UTF_8))
    val nulls = values.map(_.isEmpty).toArray
    new VarBinaryArray(values.size, if (nulls.contains(true)) nulls else null, bytes.scanLeft(0)(_ + _.length).toArray, bytes.flatten.toArray)
  }

  /** The values of a string array, whatever its kind. */
  private def strings(a: ColumnArray): Seq[Option[String]] = {
    val v = ColumnArrays.materialize(a).asInstanceOf[VarBinaryArray]
    (0 until v.length).map(i => if (v.isNull(i)) None else Some(new String(v.data, v.offsets(i), v.offsets(i + 1) - v.offsets(i), UTF_8)))
  }

  private val d1 = dict("red", "green", "", "blue")
  private val d2 = dict("é", "red", "日本")

  test("materialize resolves ids and keeps nulls") {
    assert(strings(array(d1, 0, 3, -1, 2, 1, 1)) == Seq(Some("red"), Some("blue"), None, Some(""), Some("green"), Some("green")))
  }

  test("take and slice keep the dictionary object and the values") {
    val a = array(d1, 0, 3, -1, 2, 1, 1, 3)
    val t = ColumnArrays.take(a, Array(6, 0, 2, 2, 5))
    assert(t.isInstanceOf[DictionaryArray] && (t.asInstanceOf[DictionaryArray].dictionary eq d1))
    assert(strings(t) == Seq(Some("blue"), Some("red"), None, None, Some("green")))
    val s = ColumnArrays.slice(a, 2, 4)
    assert(s.isInstanceOf[DictionaryArray] && (s.asInstanceOf[DictionaryArray].dictionary eq d1))
    assert(strings(s) == strings(a).slice(2, 6))
    assert(strings(ColumnArrays.withNulls(a, Array.fill(7)(true))) == Seq.fill(7)(None))
  }

  test("concat of batches of one dictionary shares it") {
    val parts = Seq(array(d1, 0, 1), array(d1, -1, 3, 2))
    val c = ColumnArrays.concat(parts)
    assert(c.isInstanceOf[DictionaryArray] && (c.asInstanceOf[DictionaryArray].dictionary eq d1))
    assert(strings(c) == parts.flatMap(strings))
  }

  test("concat across dictionaries remaps ids into the merged dictionary") {
    val parts = Seq(array(d1, 0, 1, 3, -1), array(d2, 2, 0, 1, -1), array(d1, 2, 2))
    val c = ColumnArrays.concat(parts)
    assert(c.isInstanceOf[DictionaryArray])
    assert(c.asInstanceOf[DictionaryArray].dictionary.size == d1.size + d2.size)
    assert(strings(c) == parts.flatMap(strings))
  }

  test("concat falls back to bytes when the merged dictionary outgrows the rows, or with plain parts") {
    val small = Seq(array(d1, 1), array(d2, 2))
    val c = ColumnArrays.concat(small)
    assert(c.isInstanceOf[VarBinaryArray])
    assert(strings(c) == Seq(Some("green"), Some("日本")))
    val mixed = Seq(array(d1, 0, -1), plain(Some("x"), None, Some("yz")), array(d2, 0))
    val m = ColumnArrays.concat(mixed)
    assert(m.isInstanceOf[VarBinaryArray])
    assert(strings(m) == mixed.flatMap(strings))
  }

  test("the entries of a dictionary are split once") {
    assert(d2.entries eq d2.entries)
    assert(d2.entries.map(new String(_, UTF_8)).toSeq == Seq("é", "red", "日本"))
  }
}
