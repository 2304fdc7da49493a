package io.sparklance.spark.write

import scala.util.Random

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{GenericInternalRow, UnsafeProjection}
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceSchemaMismatchException
import io.sparklance.format._

/**
 * [[RowBatcher]] takes `UnsafeRow`s through [[StagedRows]] and other rows one by one: both
 * paths, and any mix of them, must build the same column arrays, byte for byte.
 */
class RowBatcherSuite extends AnyFunSuite {
  private val schema = StructType(Seq(
    StructField("l", LongType),
    StructField("i", IntegerType),
    StructField("d", DateType),
    StructField("x", DoubleType),
    StructField("m", DecimalType(12, 2)),
    StructField("big", DecimalType(30, 4)),
    StructField("s", StringType),
    StructField("b", BinaryType),
    StructField("f", FloatType),
    StructField("t", TimestampType),
    StructField("a", ArrayType(IntegerType)),
    StructField("st", StructType(Seq(StructField("k", StringType), StructField("v", LongType))))
  ))
  // Over 64 fields, the null bit set takes two words.
  private val wide = StructType((0 until 70).map(i =>
    StructField(s"c$i", if (i % 3 == 0) StringType else LongType)
  ))

  private def value(dt: DataType, r: Random): Any = dt match {
    case LongType => r.nextLong()
    case IntegerType | DateType => r.nextInt()
    case DoubleType => if (r.nextInt(10) == 0) Double.NaN else r.nextGaussian() * 1e6
    case FloatType => r.nextFloat()
    case TimestampType => r.nextLong() / 1000
    case d: DecimalType =>
      val digits = d.precision - 1
      val unscaled = BigInt(digits * 3, r) * (if (r.nextBoolean()) 1 else -1)
      val v = Decimal(BigDecimal(unscaled.min(BigInt(10).pow(digits) - 1), d.scale))
      v.changePrecision(d.precision, d.scale); v
    case StringType => UTF8String.fromString(r.alphanumeric.take(r.nextInt(40)).mkString + "é")
    case BinaryType => Array.fill(r.nextInt(20))(r.nextInt().toByte)
    case ArrayType(et, _) => new GenericArrayData(Array.fill(r.nextInt(4))(value(et, r)))
    case st: StructType => new GenericInternalRow(st.fields.map(f => value(f.dataType, r)))
  }

  private def rows(s: StructType, n: Int, seed: Int): Seq[InternalRow] = {
    val r = new Random(seed)
    Seq.fill(n)(new GenericInternalRow(s.fields.map(f =>
      if (r.nextInt(7) == 0) null else value(f.dataType, r)
    )))
  }

  private def batches(
      s: StructType,
      input: Seq[InternalRow],
      unsafe: Int => Boolean,
      cuts: Set[Int]
  ): Seq[Array[ColumnArray]] = {
    val b = new RowBatcher(SparkToLance.fields(s), s.fields.map(_.dataType).toSeq, s.indices)
    val proj = UnsafeProjection.create(s)
    val out = Seq.newBuilder[Array[ColumnArray]]
    input.zipWithIndex.foreach { case (row, i) =>
      if (cuts(i)) out += b.build().map(owned)
      b.add(if (unsafe(i)) proj(row) else row)
    }
    out += b.build().map(owned)
    out.result()
  }

  /**
   * A built column as the file writer takes it, before the next row is added: plain columns
   * are views over the builders' buffers (their values, not the buffers' spare room).
   */
  private def owned(a: ColumnArray): ColumnArray = a match {
    case x: FixedWidthArray => new FixedWidthArray(
        x.length,
        x.nulls,
        x.byteWidth,
        java.util.Arrays.copyOf(x.data, x.length * x.byteWidth)
      )
    case x: VarBinaryArray => new VarBinaryArray(
        x.length,
        x.nulls,
        java.util.Arrays.copyOf(x.offsets, x.length + 1),
        java.util.Arrays.copyOf(x.data, x.offsets(x.length))
      )
    case other => other
  }

  private def same(a: ColumnArray, b: ColumnArray, at: String): Unit = {
    assert(a.getClass == b.getClass && a.length == b.length, at)
    assert(java.util.Arrays.equals(a.nulls, b.nulls), s"$at: nulls")
    (a, b) match {
      case (x: FixedWidthArray, y: FixedWidthArray) =>
        assert(x.byteWidth == y.byteWidth && java.util.Arrays.equals(x.data, y.data), at)
      case (x: VarBinaryArray, y: VarBinaryArray) =>
        assert(java.util.Arrays.equals(x.offsets, y.offsets), s"$at: offsets")
        assert(java.util.Arrays.equals(x.data, y.data), s"$at: bytes")
      case (x: ListArray, y: ListArray) =>
        assert(java.util.Arrays.equals(x.offsets, y.offsets), s"$at: offsets")
        same(x.child, y.child, s"$at.item")
      case (x: StructArray, y: StructArray) =>
        x.children.indices.foreach(i => same(x.children(i), y.children(i), s"$at.$i"))
      case _ => fail(s"$at: unexpected ${a.getClass}")
    }
  }

  private def check(s: StructType, n: Int, unsafe: Int => Boolean, cuts: Set[Int] = Set.empty) = {
    val input = rows(s, n, n)
    val expected = batches(s, input, _ => false, cuts)
    val got = batches(s, input, unsafe, cuts)
    assert(got.size == expected.size)
    got.zip(expected).zipWithIndex.foreach { case ((g, e), k) =>
      assert(g.length == s.size)
      g.indices.foreach(c => same(g(c), e(c), s"batch $k column ${s(c).name}"))
    }
    assert(expected.map(_.head.length).sum == n)
  }

  test("staged UnsafeRows build what rows taken one by one build") {
    check(schema, 3000, _ => true)
  }

  test("UnsafeRows and other rows mixed, in runs and alternating, keep their order") {
    check(schema, 2500, i => (i / 700) % 2 == 0)
    check(schema, 2500, i => i % 2 == 1)
  }

  test("batches cut between staged rows hold exactly their own rows") {
    check(schema, 2600, _ => true, cuts = Set(1, 1024, 1025, 2000))
  }

  test("rows of more than 64 fields read their null bits from the right word") {
    check(wide, 1500, _ => true)
  }

  test("a null in a column the dataset holds as not nullable fails naming it") {
    val s = StructType(Seq(StructField("k", LongType, nullable = false)))
    val b = new RowBatcher(SparkToLance.fields(s), Seq(LongType), Seq(0))
    // The row comes from a plan that lets the column be null.
    val proj = UnsafeProjection.create(Array[DataType](LongType))
    val row = new GenericInternalRow(Array[Any](null))
    val e = intercept[LanceSchemaMismatchException] { b.add(proj(row)); b.build() }
    assert(e.getMessage.contains("column 'k' is not nullable"), e.getMessage)
  }
}
