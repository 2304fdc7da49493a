package io.sparklance.format

import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.StringArrays._

/**
 * Row operations on dictionary arrays: whatever take / slice / concat do (keep the ids, remap
 * them into a merged dictionary, or fall back to bytes), the values must be those of the same
 * operation on the plain bytes.
 */
class DictionaryArraySuite extends AnyFunSuite {
  private val d1 = dict("red", "green", "", "blue")
  private val d2 = dict("é", "red", "日本")

  test("materialize resolves ids and keeps nulls") {
    assert(strings(dictArray(d1, 0, 3, -1, 2, 1, 1)) == Seq(
      Some("red"),
      Some("blue"),
      None,
      Some(""),
      Some("green"),
      Some("green")
    ))
  }

  test("take and slice keep the dictionary object and the values") {
    val a = dictArray(d1, 0, 3, -1, 2, 1, 1, 3)
    val t = ColumnArrays.take(a, Array(6, 0, 2, 2, 5))
    assert(t.isInstanceOf[DictionaryArray] && (t.asInstanceOf[DictionaryArray].dictionary eq d1))
    assert(strings(t) == Seq(Some("blue"), Some("red"), None, None, Some("green")))
    val s = ColumnArrays.slice(a, 2, 4)
    assert(s.isInstanceOf[DictionaryArray] && (s.asInstanceOf[DictionaryArray].dictionary eq d1))
    assert(strings(s) == strings(a).slice(2, 6))
    assert(strings(ColumnArrays.withNulls(a, Array.fill(7)(true))) == Seq.fill(7)(None))
  }

  test("concat of batches of one dictionary shares it") {
    val parts = Seq(dictArray(d1, 0, 1), dictArray(d1, -1, 3, 2))
    val c = ColumnArrays.concat(parts)
    assert(c.isInstanceOf[DictionaryArray] && (c.asInstanceOf[DictionaryArray].dictionary eq d1))
    assert(strings(c) == parts.flatMap(strings))
  }

  test("concat across dictionaries remaps ids into the merged dictionary") {
    val parts = Seq(dictArray(d1, 0, 1, 3, -1), dictArray(d2, 2, 0, 1, -1), dictArray(d1, 2, 2))
    val c = ColumnArrays.concat(parts)
    assert(c.isInstanceOf[DictionaryArray])
    assert(c.asInstanceOf[DictionaryArray].dictionary.size == d1.size + d2.size)
    assert(strings(c) == parts.flatMap(strings))
  }

  test(
    "concat falls back to bytes when the merged dictionary outgrows the rows, or with plain parts"
  ) {
    val small = Seq(dictArray(d1, 1), dictArray(d2, 2))
    val c = ColumnArrays.concat(small)
    assert(c.isInstanceOf[VarBinaryArray])
    assert(strings(c) == Seq(Some("green"), Some("日本")))
    val mixed = Seq(dictArray(d1, 0, -1), plain(Some("x"), None, Some("yz")), dictArray(d2, 0))
    val m = ColumnArrays.concat(mixed)
    assert(m.isInstanceOf[VarBinaryArray])
    assert(strings(m) == mixed.flatMap(strings))
  }

  test("the entries of a dictionary are split once") {
    assert(d2.entries eq d2.entries)
    assert(d2.entries.map(new String(_, UTF_8)).toSeq == Seq("é", "red", "日本"))
  }
}
