package io.sparklance.format.codec

import java.lang.invoke.{MethodHandles, VarHandle}
import java.nio.ByteOrder

/** Little-endian reads and bulk conversions on byte arrays (VarHandles: no bounds beyond the array's own). */
object LittleEndian {
  private val I16: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Short]], ByteOrder.LITTLE_ENDIAN)
  private val I32: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Int]], ByteOrder.LITTLE_ENDIAN)
  private val I64: VarHandle =
    MethodHandles.byteArrayViewVarHandle(classOf[Array[Long]], ByteOrder.LITTLE_ENDIAN)

  def u8(a: Array[Byte], off: Int): Int = a(off) & 0xff
  def u16(a: Array[Byte], off: Int): Int = (I16.get(a, off): Short) & 0xffff
  def i32(a: Array[Byte], off: Int): Int = I32.get(a, off)
  def u32(a: Array[Byte], off: Int): Long = (I32.get(a, off): Int) & 0xffffffffL
  def i64(a: Array[Byte], off: Int): Long = I64.get(a, off)
  def putI16(a: Array[Byte], off: Int, v: Short): Unit = I16.set(a, off, v)
  def putI32(a: Array[Byte], off: Int, v: Int): Unit = I32.set(a, off, v)
  def putI64(a: Array[Byte], off: Int, v: Long): Unit = I64.set(a, off, v)

  /**
   * The `n` (1..8) bytes at `off` as a little-endian long, higher bytes zero: one 8-byte read
   * where the array has 8 bytes from `off`, else byte by byte. An `n` over 8 reads 8.
   */
  @inline def loadPartial(a: Array[Byte], off: Int, n: Int): Long =
    if (off + 8 <= a.length) {
      val w = i64(a, off)
      if (n >= 8) w else w & ((1L << (8 * n)) - 1)
    } else {
      var w = 0L; var i = 0
      while (i < math.min(n, 8)) { w |= (a(off + i) & 0xffL) << (8 * i); i += 1 }
      w
    }

  /** Reads an unsigned little-endian integer of `bytes` (1, 2, 4 or 8) bytes. */
  def uint(a: Array[Byte], off: Int, bytes: Int): Long = bytes match {
    case 1 => u8(a, off)
    case 2 => u16(a, off)
    case 4 => u32(a, off)
    case 8 => i64(a, off)
    case _ => throw new IllegalArgumentException(s"integer width $bytes")
  }

  def toLongs(a: Array[Byte], off: Int, n: Int): Array[Long] = {
    val out = new Array[Long](n)
    java.nio.ByteBuffer.wrap(a, off, n * 8).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(out)
    out
  }
  def toInts(a: Array[Byte], off: Int, n: Int): Array[Int] = {
    val out = new Array[Int](n)
    java.nio.ByteBuffer.wrap(a, off, n * 4).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(out)
    out
  }

  /** `n` values into `out(0 until n)` (no allocation). */
  def longsInto(a: Array[Byte], off: Int, n: Int, out: Array[Long]): Unit =
    java.nio.ByteBuffer.wrap(a, off, n * 8).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().get(
      out,
      0,
      n
    )
  def intsInto(a: Array[Byte], off: Int, n: Int, out: Array[Int]): Unit =
    java.nio.ByteBuffer.wrap(a, off, n * 4).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(
      out,
      0,
      n
    )
  def u16sInto(a: Array[Byte], off: Int, n: Int, out: Array[Int]): Unit = {
    var i = 0
    while (i < n) { out(i) = (I16.get(a, off + 2 * i): Short) & 0xffff; i += 1 }
  }
  def u8sInto(a: Array[Byte], off: Int, n: Int, out: Array[Int]): Unit = {
    var i = 0
    while (i < n) { out(i) = a(off + i) & 0xff; i += 1 }
  }

  /** u16 words zero-extended to ints. */
  def u16sToInts(a: Array[Byte], off: Int, n: Int): Array[Int] = {
    val out = new Array[Int](n); var i = 0
    while (i < n) { out(i) = u16(a, off + 2 * i); i += 1 }
    out
  }
  def u8sToInts(a: Array[Byte], off: Int, n: Int): Array[Int] = {
    val out = new Array[Int](n); var i = 0
    while (i < n) { out(i) = a(off + i) & 0xff; i += 1 }
    out
  }
  def fromLongs(v: Array[Long], off: Int, n: Int, dst: Array[Byte], dstOff: Int): Unit =
    java.nio.ByteBuffer.wrap(dst, dstOff, n * 8).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer().put(
      v,
      off,
      n
    )
  def fromInts(v: Array[Int], off: Int, n: Int, dst: Array[Byte], dstOff: Int): Unit =
    java.nio.ByteBuffer.wrap(dst, dstOff, n * 4).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().put(
      v,
      off,
      n
    )
  def fromIntsAs16(v: Array[Int], off: Int, n: Int, dst: Array[Byte], dstOff: Int): Unit = {
    var i = 0
    while (i < n) { I16.set(dst, dstOff + 2 * i, v(off + i).toShort); i += 1 }
  }
  def fromIntsAs8(v: Array[Int], off: Int, n: Int, dst: Array[Byte], dstOff: Int): Unit = {
    var i = 0
    while (i < n) { dst(dstOff + i) = v(off + i).toByte; i += 1 }
  }
}
