package io.sparklance.format.codec

import org.scalatest.funsuite.AnyFunSuite

/**
 * Our FSST symbol-table builder and encoder, decoded by our decoder ([[Fsst]], checked
 * against pylance-written files by the fixture suites); pylance decoding what we write is
 * covered by tests/write (pytest).
 */
class FsstEncoderSuite extends AnyFunSuite {
  private def roundTrip(strs: Seq[Array[Byte]]): FsstEncoder.Compressed = {
    val offsets = strs.scanLeft(0)(_ + _.length).toArray
    val data = strs.flatten.toArray
    val c = FsstEncoder.compress(data, offsets, strs.length)
    assert(c.table.length == FsstEncoder.TableBytes)
    val (o, d) = Fsst.decompress(c.table, c.codes, c.offsets, strs.length)
    assert(o.length == strs.length + 1)
    strs.indices.foreach { i =>
      assert(
        java.util.Arrays.equals(java.util.Arrays.copyOfRange(d, o(i), o(i + 1)), strs(i)),
        s"string $i"
      )
    }
    c
  }

  test("text compresses well and decodes exactly") {
    val r = new scala.util.Random(1)
    val words = Array(
      "user",
      "example",
      "com",
      "lance",
      "spark",
      "the",
      "of",
      "and",
      "@",
      ".",
      "-",
      "http://",
      "www."
    )
    val strs = (0 until 20000).map(i =>
      (0 until 1 + r.nextInt(8)).map(_ => words(r.nextInt(words.length))).mkString("") + (i % 100)
    )
    val bytes = strs.map(_.getBytes("UTF-8"))
    val c = roundTrip(bytes)
    val raw = bytes.map(_.length).sum
    assert(c.codeBytes < raw / 2, s"${c.codeBytes} code bytes for $raw input bytes")
  }

  test("binary noise, empty strings, single bytes and every byte value decode exactly") {
    val r = new scala.util.Random(2)
    val strs = (0 until 3000).map { i =>
      i % 5 match {
        case 0 => Array.emptyByteArray
        case 1 => Array((i % 256).toByte)
        case 2 => Array.fill(r.nextInt(40))(r.nextInt(256).toByte)
        case 3 => Array.tabulate(256)(_.toByte)
        case _ => Array.fill(300)(255.toByte)
      }
    }
    roundTrip(strs)
  }

  test("tiny and empty inputs") {
    roundTrip(Seq(Array.emptyByteArray))
    roundTrip(Seq("a".getBytes, "ab".getBytes, "abc".getBytes))
    roundTrip(Seq.fill(100)(Array.emptyByteArray))
  }

  test("strings longer than a sample, and a sample drawn from many strings") {
    val r = new scala.util.Random(3)
    roundTrip(Seq(Array.fill(100000)(("abcdefgh" (r.nextInt(8))).toByte)))
    roundTrip((0 until 50000).map(i => s"row-$i-${i * 7919 % 1000}".getBytes))
  }

  test("values compressing 8x decode exactly past the first buffer's 4x of the codes") {
    // One 8-byte symbol per code: the output outgrows the buffer sized for typical text, at
    // the first value and again later.
    val rep = "lancefmt" * 64
    val strs = Seq(rep.getBytes) ++ (0 until 2000).map(i => (rep * (1 + i % 3)).getBytes) ++
      Seq("x".getBytes, Array.emptyByteArray, (rep * 40).getBytes)
    val c = roundTrip(strs)
    val raw = strs.map(_.length).sum
    assert(c.codeBytes * 6 < raw, s"${c.codeBytes} code bytes for $raw input bytes")
  }

  test("halves of very unequal counts, in a slice of a larger buffer, decode exactly") {
    // The encoder splits the strings into two halves of about equal bytes, encoded side by
    // side: here one half is a single long string, the other thousands of short ones.
    val r = new scala.util.Random(4)
    val short = (0 until 3000).map(i => s"w${i % 97}-${r.nextInt(1000)}".getBytes)
    val long = Array.fill(60000)(("lance spark " (r.nextInt(12))).toByte)
    for (
      strs <- Seq(
        short :+ long,
        long +: short,
        Seq(long, Array.emptyByteArray),
        Seq(Array.emptyByteArray, long)
      )
    ) {
      val c = roundTrip(strs)
      // The same strings after 5 bytes of something else give the same codes.
      val prefix = Array.fill(5)(7.toByte)
      val data = prefix ++ strs.flatten
      val offsets = strs.scanLeft(prefix.length)(_ + _.length).toArray
      val s = FsstEncoder.compress(data, offsets, strs.length)
      assert(s.offsets.toSeq == c.offsets.toSeq)
      assert(java.util.Arrays.equals(s.codes, c.codes))
    }
  }

  test("codes written into a caller's scratch buffer are the exact codes, left untrimmed") {
    val r = new scala.util.Random(3)
    def page(n: Int): (Array[Byte], Array[Int]) = {
      val strs = (0 until n).map(i => s"order ${r.nextInt(500)} of clerk#${i % 37} ".getBytes)
      (strs.flatten.toArray, strs.scanLeft(0)(_ + _.length).toArray)
    }
    var scratch = Array.emptyByteArray
    // A first page grows the scratch, a smaller one reuses it, a larger one replaces it.
    for (n <- Seq(2000, 300, 5000)) {
      val (data, offsets) = page(n)
      val exact = FsstEncoder.compress(data, offsets, n)
      val given = scratch
      val c = FsstEncoder.compress(data, offsets, n, scratch)
      assert(c.offsets.toSeq == exact.offsets.toSeq)
      assert(java.util.Arrays.equals(c.codes, 0, c.codeBytes, exact.codes, 0, exact.codeBytes))
      assert(exact.codes.length == exact.codeBytes)
      assert(c.codes.length >= 2 * data.length, s"$n strings: the codes are the whole buffer")
      if (given.length >= 2 * data.length) assert(c.codes eq given, s"$n strings: reused")
      else assert(!(c.codes eq given), s"$n strings: a buffer too small is replaced")
      scratch = c.codes
    }
  }
}
