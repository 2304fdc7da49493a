package io.sparklance.format

import java.nio.ByteBuffer
import java.nio.charset.{CharacterCodingException, CodingErrorAction}
import java.nio.charset.StandardCharsets.UTF_8

import org.scalatest.funsuite.AnyFunSuite

/** The validator against the JDK's strict UTF-8 decoder, on crafted and random bytes. */
class Utf8ValidatorSuite extends AnyFunSuite {
  private def jdk(b: Array[Byte]): Boolean =
    try {
      UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(b))
      true
    } catch { case _: CharacterCodingException => false }

  private def bytes(xs: Int*): Array[Byte] = xs.map(_.toByte).toArray

  test("well-formed text of every sequence length is valid") {
    for (
      s <- Seq(
        "",
        "ascii",
        "é",
        "中文",
        "😀 emoji",
        "\u0000",
        "\uffff",
        "\ud7ff",
        new String(Character.toChars(0x10ffff))
      )
    )
      assert(Utf8Validator.valid(s.getBytes(UTF_8), 0, s.getBytes(UTF_8).length), s)
  }

  test("overlong forms, surrogates, out-of-range and truncated sequences are not") {
    val bad = Seq(
      bytes(0x80),
      bytes(0xc0, 0x80),
      bytes(0xc1, 0xbf),
      bytes(0xe0, 0x80, 0x80),
      bytes(0xed, 0xa0, 0x80),
      bytes(0xf0, 0x80, 0x80, 0x80),
      bytes(0xf4, 0x90, 0x80, 0x80),
      bytes(0xf5, 0x80, 0x80, 0x80),
      bytes(0xff),
      bytes(0xe2, 0x82),
      bytes(0xc3),
      bytes(0x61, 0xf0, 0x9f, 0x98)
    )
    for (b <- bad) {
      assert(!jdk(b))
      assert(!Utf8Validator.valid(b, 0, b.length), b.map(x => f"${x & 0xff}%02x").mkString(" "))
    }
  }

  test("random bytes: the same verdict as the JDK's strict decoder") {
    val rnd = new scala.util.Random(7)
    val pool = bytes(0x41, 0x7f, 0x80, 0xbf, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5,
      0xa0, 0x90, 0x8f, 0x9f)
    for (_ <- 0 until 50000) {
      val b = Array.fill(rnd.nextInt(7))(pool(rnd.nextInt(pool.length)))
      assert(
        Utf8Validator.valid(b, 0, b.length) == jdk(b),
        b.map(x => f"${x & 0xff}%02x").mkString(" ")
      )
    }
  }

  test("charCount counts the characters of well-formed text, at any offset and length") {
    val rnd = new scala.util.Random(11)
    val chars = Seq(
      "a",
      "~",
      "\u0000",
      "é",
      "ß",
      "中",
      "\uffff",
      "😀",
      new String(Character.toChars(0x10ffff))
    )
    for (_ <- 0 until 5000) {
      val s = Seq.fill(rnd.nextInt(30))(chars(rnd.nextInt(chars.length))).mkString
      val pad = rnd.nextInt(9)
      val b = Array.fill[Byte](pad)(0x80.toByte) ++ s.getBytes(UTF_8) ++ bytes(0x80, 0xbf)
      assert(Utf8Validator.charCount(b, pad, b.length - 2) == s.codePointCount(0, s.length), s)
    }
  }

  test("isAscii sees a high bit anywhere: in an 8-byte stride, in the tail, at any offset") {
    for (len <- 0 to 40; start <- 0 to 3; at <- start until start + len) {
      val b = Array.fill[Byte](start + len + 3)('a'.toByte)
      assert(Utf8Validator.isAscii(b, start, start + len))
      b(at) = 0xc3.toByte
      assert(!Utf8Validator.isAscii(b, start, start + len), s"len $len start $start at $at")
    }
    val big = Array.fill[Byte](3 * 4096 + 5)('a'.toByte)
    big(2 * 4096 + 3) = 0x80.toByte
    assert(!Utf8Validator.isAscii(big, 0, big.length) && Utf8Validator.isAscii(big, 0, 2 * 4096))
  }

  test("firstInvalid finds the value, past an all-ASCII stretch and across values") {
    val values = Seq("a" * 5000, "b", "é", "c").map(_.getBytes(UTF_8)) :+ bytes(0x61, 0xc3)
    val data = values.flatten.toArray
    val offsets = values.scanLeft(0)(_ + _.length).toArray
    assert(Utf8Validator.firstInvalid(offsets, 0, data, 0, 4) == -1)
    assert(Utf8Validator.firstInvalid(offsets, 0, data, 0, 5) == 4)
    assert(Utf8Validator.firstInvalid(offsets, 1, data, 0, 4) == 3)
    // A character split between two values makes both invalid, though the bytes join up.
    val split = Array(0, 1, 2)
    assert(Utf8Validator.firstInvalid(split, 0, "é".getBytes(UTF_8), 0, 2) == 0)
    assert(Utf8Validator.describe(offsets, 0, data, 4).contains("61 c3"))
  }
}
