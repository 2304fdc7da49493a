package io.sparklance.format.writer

import io.sparklance.format.codec.{LittleEndian => LE}

/** A growable little-endian byte buffer: how every page and metadata block is assembled. */
final class ByteBuf(initial: Int = 256) {
  private var a = new Array[Byte](math.max(initial, 16))
  private var n = 0

  def size: Int = n
  def array: Array[Byte] = a
  def toArray: Array[Byte] = java.util.Arrays.copyOf(a, n)
  def clear(): Unit = n = 0

  /** Keeps the first `size` bytes. */
  def truncate(size: Int): Unit = { require(size >= 0 && size <= n); n = size }

  def ensure(extra: Int): Unit = {
    val need = n.toLong + extra
    if (need > a.length) {
      if (need > Int.MaxValue - 16)
        throw new IllegalStateException(s"buffer of $need bytes is too large")
      a = ByteBuf.grow(a, n, math.max(need, math.min(Int.MaxValue - 16L, a.length * 2L)).toInt)
    }
  }

  /** Bytes held by the array (what keeping this buffer costs). */
  def capacity: Int = a.length

  def u8(v: Int): Unit = { ensure(1); a(n) = v.toByte; n += 1 }
  def u16(v: Int): Unit = { ensure(2); LE.putI16(a, n, v.toShort); n += 2 }
  def u32(v: Long): Unit = { ensure(4); LE.putI32(a, n, v.toInt); n += 4 }
  def u64(v: Long): Unit = { ensure(8); LE.putI64(a, n, v); n += 8 }
  def bytes(b: Array[Byte]): Unit = bytes(b, 0, b.length)
  def bytes(b: Array[Byte], off: Int, len: Int): Unit = {
    ensure(len); System.arraycopy(b, off, a, n, len); n += len
  }
  def zeros(len: Int): Unit = {
    ensure(len); java.util.Arrays.fill(a, n, n + len, 0.toByte); n += len
  }

  /** Grows the content by `len` bytes, left as they are for the caller to write at the
   * returned offset of [[array]]. */
  def extend(len: Int): Int = { ensure(len); val at = n; n += len; at }

  /** Pads with `fill` until the size is a multiple of `align`. */
  def pad(align: Int, fill: Byte): Unit = {
    val p = (align - (n % align)) % align
    ensure(p); java.util.Arrays.fill(a, n, n + p, fill); n += p
  }
}

private[writer] object ByteBuf {

  /**
   * `a` grown to `cap` keeping its first `n` bytes: a copy of the whole array when it is
   * mostly content (a copy allocates without zeroing what it copies), else a new zeroed
   * array and a copy of the content only (after `clear`, nothing is copied).
   */
  def grow(a: Array[Byte], n: Int, cap: Int): Array[Byte] =
    if (n >= a.length / 2) java.util.Arrays.copyOf(a, cap)
    else { val b = new Array[Byte](cap); System.arraycopy(a, 0, b, 0, n); b }
}
