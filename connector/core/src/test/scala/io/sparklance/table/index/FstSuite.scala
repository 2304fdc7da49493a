package io.sparklance.table.index

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.{DefaultLineOnly, Pylance, TempDirs}

/** Our fst reader and builder against the token sets pylance 14.0.2 writes. */
@DefaultLineOnly
class FstSuite extends AnyFunSuite {
  private def hex(s: String): Array[Byte] =
    s.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray

  test("an INVERTED index's token set reads back and is built again byte for byte") {
    val dir = TempDirs.create("lance-fst-")
    val p = dir.resolve("t").toString
    Pylance.call("table_ops", "fts_make", p)
    val fsts = Pylance.call("table_ops", "fts_token_fsts", p)
    assert(fsts.size > 0)
    fsts.elements().forEachRemaining { node =>
      val bytes = hex(node.asText)
      val (keys, ids) = FstReader.entries(bytes, "tokens")
      assert(keys.length > 3000)
      // Keys in order, token ids a permutation of 0 until n.
      assert(keys.sliding(2).forall { case Array(a, b) =>
        java.util.Arrays.compareUnsigned(a, b) < 0
      })
      assert(ids.sorted.toSeq == keys.indices.map(_.toLong))
      val built = FstBuilder.build(keys, ids)
      val at = built.indices.find(i => i >= bytes.length || built(i) != bytes(i))
      assert(built.sameElements(bytes), s"sizes ${built.length}, ${bytes.length}, first diff $at")
    }
  }
}
