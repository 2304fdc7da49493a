package io.sparklance.format.writer

import io.sparklance.format._
import io.sparklance.format.LogicalType._

/**
 * Random [[ColumnArray]]s for a Lance field tree: nulls wherever the field is nullable
 * (including null and empty lists and null structs), values of every width, strings short
 * and long. `nullRate` 0 gives no nulls at all. `style` shapes the leaf values so that each
 * writer encoding gets exercised: `Random` (mostly unique), `LowCard` (a handful of distinct
 * values: dictionaries), `Runs` (long runs: RLE) and `Constant` (one value: constant pages).
 */
final class RandomArrays(
    seed: Long,
    nullRate: Double = 0.2,
    allowNullStructs: Boolean = true,
    style: RandomArrays.Style = RandomArrays.Random
) {
  import RandomArrays._
  private val r = new scala.util.Random(seed)

  private def nulls(f: LanceField, n: Int): Array[Boolean] =
    if (!f.nullable || nullRate == 0) null
    else Array.fill(n)(r.nextDouble() < nullRate)

  def array(f: LanceField, n: Int): ColumnArray = f.logicalType match {
    case Struct =>
      new StructArray(
        n,
        if (allowNullStructs) nulls(f, n) else null,
        f.children.map(array(_, n)).toArray
      )
    case List | LargeList | Map | _: ListOfStruct =>
      val ns = nulls(f, n)
      val offsets = new Array[Int](n + 1)
      (0 until n).foreach { i =>
        val len = if (ns != null && ns(i)) 0 else r.nextInt(5)
        offsets(i + 1) = offsets(i) + len
      }
      new ListArray(n, ns, offsets, array(f.children.head, offsets(n)))
    case FixedSizeList(item, dim) =>
      val itemField = LanceField(-1, f.id, "item", item, nullable = false, Predef.Map.empty, Nil)
      new FixedSizeListArray(n, nulls(f, n), dim, array(itemField, n * dim))
    case t => style match {
        case Random => leaf(f, t, n)
        case s =>
          // Draw from a small pool of values: by random pick, in runs, or always the first.
          val poolSize = s match { case LowCard => 1 + r.nextInt(6); case Runs => 8; case _ => 1 }
          val pool = leaf(f.copy(nullable = false), t, poolSize)
          val runLen = 1 + r.nextInt(300)
          val idx = Array.tabulate(n) { i =>
            s match {
              case LowCard => r.nextInt(poolSize); case Runs => (i / runLen) % poolSize; case _ => 0
            }
          }
          val taken = ColumnArrays.take(pool, idx)
          val ns = nulls(f, n)
          if (ns == null) taken else withNulls(taken, ns)
      }
  }

  private def withNulls(a: ColumnArray, ns: Array[Boolean]): ColumnArray = a match {
    case f: FixedWidthArray => new FixedWidthArray(f.length, ns, f.byteWidth, f.data)
    case v: VarBinaryArray => new VarBinaryArray(v.length, ns, v.offsets, v.data)
    case other => other
  }

  private def leaf(f: LanceField, t: LogicalType, n: Int): ColumnArray =
    ValueShape.ofType(t, f) match {
      case ValueShape.Var =>
        val long = f.name.startsWith("long")
        val offsets = new Array[Int](n + 1)
        val out = new java.io.ByteArrayOutputStream()
        (0 until n).foreach { i =>
          val len = if (long) 250 + r.nextInt(200) else r.nextInt(12)
          val s = if (t == Utf8 || t == LargeUtf8)
            r.alphanumeric.take(len).mkString.getBytes("UTF-8")
          else Array.fill(len)(r.nextInt(256).toByte)
          out.write(s)
          offsets(i + 1) = out.size()
        }
        new VarBinaryArray(n, nulls(f, n), offsets, out.toByteArray)
      case ValueShape.Fixed(w, bool) =>
        val data = new Array[Byte](n * w)
        val bb = java.nio.ByteBuffer.wrap(data).order(java.nio.ByteOrder.LITTLE_ENDIAN)
        (0 until n).foreach { i =>
          t match {
            case Bool => data(i) = r.nextInt(2).toByte
            case Float32 => bb.putFloat(i * 4, (r.nextGaussian() * 100).toFloat)
            case Float64 => bb.putDouble(i * 8, r.nextGaussian() * 1e6)
            case Float16 => bb.putShort(i * 2, (0x3c00 + r.nextInt(0x400)).toShort)
            case Int64 | _: Timestamp | _: Duration | Date64 =>
              bb.putLong(i * 8, r.nextLong() % 4000000000000000L)
            case Int32 | Date32 =>
              bb.putInt(i * 4, if (f.name.startsWith("small")) r.nextInt(50) else r.nextInt())
            case _: Decimal =>
              val v = java.math.BigInteger.valueOf(r.nextLong() % 1000000000000L)
              val be = v.toByteArray
              (0 until w).foreach { k =>
                data(i * w + k) =
                  if (k < be.length) be(be.length - 1 - k) else (if (v.signum < 0) -1 else 0).toByte
              }
            case _ => (0 until w).foreach(k => data(i * w + k) = r.nextInt(256).toByte)
          }
        }
        new FixedWidthArray(n, nulls(f, n), w, data)
      case other => throw new IllegalArgumentException(s"no generator for $other")
    }
}

object RandomArrays {
  sealed trait Style
  case object Random extends Style
  case object LowCard extends Style
  case object Runs extends Style
  case object Constant extends Style
}
