package io.sparklance.table

import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Random

import org.apache.spark.sql.catalyst.util.SQLOrderingUtil
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.format._
import io.sparklance.table.FilterValue._
import io.sparklance.table.RowFilter._

/**
 * The evaluator against Spark's own value semantics, on random arrays and predicates: doubles
 * ordered by Spark's `SQLOrderingUtil.compareDoubles` (NaN largest, -0.0 = 0.0), strings by
 * `UTF8String.binaryCompare`, SQL three-valued logic for nulls under NOT. The end-to-end check
 * against Spark's evaluation of the same SQL on pylance data is tests/test_filter_pushdown.py.
 */
class RowFilterEvaluatorSuite extends AnyFunSuite {
  private val n = 500
  private val rng = new Random(11)

  private def field(name: String, t: LogicalType) =
    LanceField(1, -1, name, t, nullable = true, Map.empty, Nil)

  private val fields = Map(
    "i16" -> field("i16", LogicalType.Int16),
    "u32" -> field("u32", LogicalType.UInt32),
    "f32" -> field("f32", LogicalType.Float32),
    "f64" -> field("f64", LogicalType.Float64),
    "s" -> field("s", LogicalType.Utf8)
  )

  private val specials =
    Array(Double.NaN, -0.0, 0.0, Double.PositiveInfinity, Double.NegativeInfinity, 1.5, -1.5)
  // Longer than 16 bytes too (compared by the library rather than byte by byte), sharing
  // prefixes across that length and differing past it.
  private val strings = Array(
    "",
    "a",
    "ab",
    "abc",
    "é",
    "日本",
    "\u007f",
    "\u0080",
    "zz",
    "abcdefghijklmnop",
    "abcdefghijklmnopq",
    "abcdefghijklmnopé",
    "abcdefghijklmnopqr"
  )

  private val nulls: Map[String, Array[Boolean]] =
    fields.keys.map(k => k -> Array.fill(n)(rng.nextDouble() < 0.2)).toMap
  private val i16 = Array.fill(n)((rng.nextInt(600) - 300).toShort)
  private val u32 = Array.fill(n)(rng.nextInt()) // raw bits; the value is unsigned
  private val f64 = Array.fill(n)(if (rng.nextBoolean()) specials(rng.nextInt(specials.length))
  else rng.nextInt(7) - 3.0)
  private val f32 = f64.map(_.toFloat)
  private val str = Array.fill(n)(strings(rng.nextInt(strings.length)))

  private def le(width: Int)(put: (ByteBuffer, Int) => Unit): Array[Byte] = {
    val b = ByteBuffer.allocate(n * width).order(ByteOrder.LITTLE_ENDIAN)
    (0 until n).foreach(put(b, _))
    b.array()
  }

  private val arrays: Map[String, ColumnArray] = Map(
    "i16" -> new FixedWidthArray(n, nulls("i16"), 2, le(2)((b, i) => b.putShort(i16(i)))),
    "u32" -> new FixedWidthArray(n, nulls("u32"), 4, le(4)((b, i) => b.putInt(u32(i)))),
    "f32" -> new FixedWidthArray(n, nulls("f32"), 4, le(4)((b, i) => b.putFloat(f32(i)))),
    "f64" -> new FixedWidthArray(n, nulls("f64"), 8, le(8)((b, i) => b.putDouble(f64(i)))),
    "s" -> {
      val bytes = str.map(_.getBytes(UTF_8))
      new VarBinaryArray(n, nulls("s"), bytes.scanLeft(0)(_ + _.length), bytes.flatten)
    }
  )

  /** Spark's answer for one row: Some(true/false), or None for SQL null (UNKNOWN). */
  private def reference(f: RowFilter, i: Int): Option[Boolean] = f match {
    case Const(v) => Some(v)
    case And(l, r) => (reference(l, i), reference(r, i)) match {
        case (Some(false), _) | (_, Some(false)) => Some(false)
        case (Some(true), Some(true)) => Some(true)
        case _ => None
      }
    case Or(l, r) => (reference(l, i), reference(r, i)) match {
        case (Some(true), _) | (_, Some(true)) => Some(true)
        case (Some(false), Some(false)) => Some(false)
        case _ => None
      }
    case IsNull(c, neg) => Some(nulls(c)(i) != neg)
    case _ if nulls(f.columns.head)(i) => None
    case Compare(c, op, v) =>
      val cmp = Integer.signum(compare(c, i, v))
      Some(holds(op, cmp))
    case Remainder(c, d, op, v) =>
      val x = if (c == "i16") i16(i).toLong else u32(i) & 0xffffffffL
      val cmp = java.lang.Long.compare(x % d, v)
      Some(holds(op, cmp))
    case In(c, vs, neg) => Some(vs.exists(v => compare(c, i, v) == 0) != neg)
    case StringMatch(c, kind, p, neg) =>
      val s = UTF8String.fromString(str(i)); val pat = UTF8String.fromBytes(p)
      Some((kind match {
        case MatchKind.StartsWith => s.startsWith(pat)
        case MatchKind.EndsWith => s.endsWith(pat)
        case MatchKind.Contains => s.contains(pat)
        case MatchKind.Like => likeRegex(pat.toString).matcher(str(i)).matches()
      }) != neg)
  }

  /** Spark's own LIKE: the pattern as the regular expression Spark compiles for it. */
  private def likeRegex(pattern: String): java.util.regex.Pattern = java.util.regex.Pattern.compile(
    org.apache.spark.sql.catalyst.util.StringUtils.escapeLikeRegex(pattern, '\\')
  )

  private def holds(op: CompareOp, cmp: Int): Boolean = op match {
    case CompareOp.Eq => cmp == 0
    case CompareOp.NotEq => cmp != 0
    case CompareOp.Lt => cmp < 0
    case CompareOp.LtEq => cmp <= 0
    case CompareOp.Gt => cmp > 0
    case CompareOp.GtEq => cmp >= 0
  }

  private def compare(c: String, i: Int, v: FilterValue): Int = (c, v) match {
    case ("i16", LongValue(x)) => java.lang.Long.compare(i16(i).toLong, x)
    case ("u32", LongValue(x)) => java.lang.Long.compare(u32(i) & 0xffffffffL, x)
    case ("f32", DoubleValue(x)) => SQLOrderingUtil.compareFloats(f32(i), x.toFloat)
    case ("f64", DoubleValue(x)) => SQLOrderingUtil.compareDoubles(f64(i), x)
    case ("s", BytesValue(x)) =>
      UTF8String.fromString(str(i)).compareTo(UTF8String.fromBytes(x)) // binary order on every line
    case other => fail(s"bad case $other")
  }

  private def literal(c: String): FilterValue = c match {
    case "i16" => LongValue(rng.nextInt(700) - 350)
    case "u32" => LongValue(if (rng.nextBoolean()) u32(rng.nextInt(n)) & 0xffffffffL
      else rng.nextInt(1 << 30).toLong)
    case "f32" | "f64" => DoubleValue(if (rng.nextBoolean()) specials(rng.nextInt(specials.length))
      else rng.nextInt(7) - 3.0)
    case _ => BytesValue(strings(rng.nextInt(strings.length)).getBytes(UTF_8))
  }

  private val ops =
    Seq(CompareOp.Eq, CompareOp.NotEq, CompareOp.Lt, CompareOp.LtEq, CompareOp.Gt, CompareOp.GtEq)

  private def randomFilter(depth: Int): RowFilter = rng.nextInt(10) match {
    case 0 | 1 if depth < 3 => And(randomFilter(depth + 1), randomFilter(depth + 1))
    case 2 | 3 if depth < 3 => Or(randomFilter(depth + 1), randomFilter(depth + 1))
    case 4 if depth < 3 => RowFilter.not(randomFilter(depth + 1))
    case _ =>
      val c = fields.keys.toSeq(rng.nextInt(fields.size))
      rng.nextInt(8) match {
        case 0 => IsNull(c, rng.nextBoolean())
        case 1 => In(c, Seq.fill(1 + rng.nextInt(4))(literal(c)), rng.nextBoolean())
        case 3 if c == "i16" || c == "u32" =>
          Remainder(
            c,
            Seq(-7L, 3L, 1000L)(rng.nextInt(3)),
            ops(rng.nextInt(ops.size)),
            rng.nextInt(7) - 3L
          )
        case 2 if c == "s" =>
          rng.nextInt(4) match {
            case 3 => StringMatch(
                c,
                MatchKind.Like,
                Seq.fill(2 + rng.nextInt(2))(
                  strings(rng.nextInt(strings.length)).take(1)
                ).mkString("%").getBytes(UTF_8),
                rng.nextBoolean()
              )
            case k => StringMatch(
                c,
                Seq(MatchKind.StartsWith, MatchKind.EndsWith, MatchKind.Contains)(k),
                strings(rng.nextInt(strings.length)).take(1).getBytes(UTF_8),
                rng.nextBoolean()
              )
          }
        case _ => Compare(c, ops(rng.nextInt(ops.size)), literal(c))
      }
  }

  test("random predicates keep exactly the rows Spark's semantics make TRUE") {
    (0 until 400).foreach { k =>
      // Build un-negated trees and negate through RowFilter.not, as the translator does.
      val f = randomFilter(0)
      val got = new RowFilterEvaluator(f, fields).evaluate(arrays, n)
      (0 until n).foreach { i =>
        val want = reference(f, i).contains(true)
        assert(got(i) == want, s"case $k row $i: $f")
      }
    }
  }

  test("long integer IN lists (runtime join keys) keep the same rows as bitmaps and arrays") {
    (0 until 200).foreach { k =>
      val c = if (k % 2 == 0) "i16" else "u32"
      // Dense lists become bitmaps (LongBits); sparse u32 values spanning 2^32 stay sorted.
      val values = Seq.fill(LongBits.MinValues + rng.nextInt(200))(literal(c))
      val f = In(c, values, negated = k % 3 == 0)
      val got = new RowFilterEvaluator(f, fields).evaluate(arrays, n)
      (0 until n).foreach { i =>
        assert(got(i) == reference(f, i).contains(true), s"case $k row $i: $f")
      }
    }
    val dense = LongBits.orSorted(Array.range(-40, 40).map(_.toLong))
    assert(dense.isInstanceOf[LongBits])
    assert((-41 to 41).map(v => dense.asInstanceOf[LongBits].contains(v.toLong)) ==
      (-41 to 41).map(v => v >= -40 && v < 40))
    assert(LongBits.orSorted(Array.tabulate(20)(i => i.toLong << 40)).isInstanceOf[Array[Long]])
    assert(LongBits.orSorted(Array(Long.MinValue) ++ Array.range(0, 20).map(_.toLong))
      .isInstanceOf[Array[Long]])
  }

  /**
   * `s` as dictionary ids: entries repeated (a batch across pages concatenates dictionaries),
   * null rows on arbitrary ids, and `padding` unused entries (beyond the batch's rows, the
   * evaluator tests rows rather than entries).
   */
  private def dictionaryS(padding: Int): DictionaryArray = {
    val entries = (strings ++ strings.reverse ++ Array.tabulate(padding)(k => s"unused-$k")).map(
      _.getBytes(UTF_8)
    )
    val dict = new StringDictionary(new VarBinaryArray(
      entries.length,
      null,
      entries.scanLeft(0)(_ + _.length),
      entries.flatten
    ))
    val ids = Array.tabulate(n) { i =>
      if (nulls("s")(i)) rng.nextInt(entries.length)
      else {
        val k = strings.indexOf(str(i)); if (rng.nextBoolean()) k else 2 * strings.length - 1 - k
      }
    }
    new DictionaryArray(n, nulls("s"), ids, dict)
  }

  for (padding <- Seq(0, 2 * n)) {
    test(s"a dictionary-encoded string column keeps the same rows (${if (padding == 0) "per entry"
      else "per row"})") {
      val dictArrays = arrays.updated("s", dictionaryS(padding))
      (0 until 300).foreach { k =>
        val f = randomFilter(0)
        val got = new RowFilterEvaluator(f, fields).evaluate(dictArrays, n)
        (0 until n).foreach(i =>
          assert(got(i) == reference(f, i).contains(true), s"case $k row $i: $f")
        )
      }
    }
  }

  test("LIKE patterns with % only keep exactly the rows Spark's LIKE keeps") {
    // Short values over a small alphabet (multi-byte characters, newlines and % among them),
    // so patterns of several runs match some rows and overlaps are common.
    val alphabet = Array("a", "b", "ab", "é", "日", "\n", "%")
    val m = 400
    val values =
      Array.fill(m)(Seq.fill(rng.nextInt(7))(alphabet(rng.nextInt(alphabet.length))).mkString)
    val isNull = Array.fill(m)(rng.nextDouble() < 0.1)
    val bytes = values.map(_.getBytes(UTF_8))
    val column = new VarBinaryArray(m, isNull, bytes.scanLeft(0)(_ + _.length), bytes.flatten)
    val like = Map("s" -> field("s", LogicalType.Utf8))
    def esc(x: String): String = "'" + x.replace("\n", "\\n") + "'"
    var matched = 0
    (0 until 300).foreach { k =>
      val runs = Seq.fill(1 + rng.nextInt(4))(
        Seq.fill(rng.nextInt(3))(alphabet(rng.nextInt(alphabet.length - 1))).mkString
      )
      val pattern = runs.mkString("%")
      val negated = rng.nextBoolean()
      val leaf = StringMatch("s", MatchKind.Like, pattern.getBytes(UTF_8), negated = false)
      val f = if (negated) RowFilter.not(leaf) else leaf
      val got = new RowFilterEvaluator(f, like).evaluate(Map[String, ColumnArray]("s" -> column), m)
      val regex = likeRegex(pattern)
      (0 until m).foreach { i =>
        val want = !isNull(i) && (regex.matcher(values(i)).matches() != negated)
        if (want && !negated) matched += 1
        assert(
          got(i) == want,
          s"case $k row $i: ${esc(values(i))} ${if (negated) "NOT " else ""}" +
            s"LIKE ${esc(pattern)}"
        )
      }
    }
    assert(matched > 1000, s"only $matched matching rows: the patterns test too little")
  }

  test("NOT is pushed to the leaves with three-valued logic") {
    val f =
      RowFilter.not(And(Compare("i16", CompareOp.Lt, LongValue(0)), IsNull("s", negated = true)))
    assert(f == Or(Compare("i16", CompareOp.GtEq, LongValue(0)), IsNull("s", negated = false)))
  }

  test("a column missing from a fragment (all null) passes only IS NULL") {
    val missing = Map[String, ColumnArray]("i16" -> new NullArray(n))
    val eval = (f: RowFilter) => new RowFilterEvaluator(f, fields).evaluate(missing, n)
    assert(!eval(Compare("i16", CompareOp.NotEq, LongValue(1))).contains(true))
    assert(!eval(In("i16", Seq(LongValue(1)), negated = true)).contains(true))
    assert(eval(IsNull("i16", negated = false)).forall(identity))
  }

  test("128-bit decimals compare by unscaled value, those beyond a long on the right side") {
    val two64 = java.math.BigInteger.ONE.shiftLeft(64)
    val values: Array[java.math.BigInteger] = Array.fill(n) {
      rng.nextInt(6) match {
        case 0 => two64.multiply(java.math.BigInteger.valueOf(rng.nextInt(5) + 1L))
        case 1 => two64.negate().subtract(java.math.BigInteger.valueOf(rng.nextInt(9)))
        case 2 => java.math.BigInteger.valueOf(Long.MaxValue)
        case _ => java.math.BigInteger.valueOf(rng.nextInt(41) - 20L)
      }
    }
    val dnulls = Array.fill(n)(rng.nextDouble() < 0.2)
    val data = le(16) { (b, i) =>
      val be = values(i).toByteArray // big-endian two's complement, sign-extended to 16 bytes
      val full = Array.fill[Byte](16)(if (values(i).signum() < 0) -1 else 0)
      System.arraycopy(be, 0, full, 16 - be.length, be.length)
      b.put(i * 16, full.reverse, 0, 16)
    }
    val dec = Map("d" -> field("d", LogicalType.Decimal(128, 38, 2)))
    val cols = Map[String, ColumnArray]("d" -> new FixedWidthArray(n, dnulls, 16, data))
    assert(FilterDomain.of(dec("d")).contains(FilterDomain.Decimal128))
    import CompareOp._
    def accepts(op: CompareOp, c: Int): Boolean = op match {
      case Eq => c == 0
      case NotEq => c != 0
      case Lt => c < 0
      case LtEq => c <= 0
      case Gt => c > 0
      case GtEq => c >= 0
    }
    for (
      lit <- Seq(-21L, -3L, 0L, 7L, 20L, Long.MaxValue - 1);
      op <- Seq(Eq, NotEq, Lt, LtEq, Gt, GtEq)
    ) {
      val got = new RowFilterEvaluator(Compare("d", op, LongValue(lit)), dec).evaluate(cols, n)
      val want = (0 until n).map { i =>
        !dnulls(i) && accepts(op, values(i).compareTo(java.math.BigInteger.valueOf(lit)))
      }
      assert(got.toSeq == want, s"d $op $lit")
    }
    val in = Seq(-20L, 0L, 3L, 19L)
    val got = new RowFilterEvaluator(In("d", in.map(LongValue), negated = false), dec)
      .evaluate(cols, n)
    assert(got.toSeq == (0 until n).map(i =>
      !dnulls(i) &&
        in.exists(x => java.math.BigInteger.valueOf(x) == values(i))
    ))
  }

  test("an empty IN list, and literals of another kind than the column's") {
    for (c <- Seq("i16", "f64", "s"); negated <- Seq(false, true)) {
      val got = new RowFilterEvaluator(In(c, Nil, negated), fields).evaluate(arrays, n)
      (0 until n).foreach(i => assert(got(i) == reference(In(c, Nil, negated), i).contains(true)))
    }
    val mixed = Seq(LongValue(1), DoubleValue(2.5), LongValue(3))
    val e = intercept[IllegalArgumentException](
      new RowFilterEvaluator(In("i16", mixed, negated = false), fields)
    )
    assert(e.getMessage.contains("2.5") && e.getMessage.contains("'i16'"), e.getMessage)
    val s = intercept[IllegalArgumentException](
      new RowFilterEvaluator(In("s", Seq(LongValue(7)), negated = true), fields)
    )
    assert(s.getMessage.contains("7") && s.getMessage.contains("'s'"), s.getMessage)
  }

  test("columns the evaluator cannot read are refused when the evaluator is built") {
    val dec = Map("d" -> field("d", LogicalType.Decimal(256, 40, 2)))
    assert(FilterDomain.of(dec("d")).isEmpty)
    intercept[IllegalArgumentException](new RowFilterEvaluator(
      Compare("d", CompareOp.Eq, LongValue(1)),
      dec
    ))
  }
}
