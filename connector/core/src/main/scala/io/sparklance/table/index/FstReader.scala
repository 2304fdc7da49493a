package io.sparklance.table.index

import scala.collection.mutable.ArrayBuffer

import io.sparklance.LanceErrors

/**
 * Reads every key and value of a map in the Rust `fst` crate's format (versions 2 and 3; see
 * [[FstBuilder]] for the layout), in key order: how an INVERTED index's token set is read
 * back (token -> token id).
 */
private[index] object FstReader {
  private val Inv = {
    val a = new Array[Int](64)
    "te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHG".zipWithIndex
      .foreach { case (c, i) => a(i + 1) = c.toInt }
    a
  }

  /** The keys and their values, in key order; `file` names the file in errors. */
  def entries(bytes: Array[Byte], file: String): (Array[Array[Byte]], Array[Long]) = {
    def fail(why: String) = LanceErrors.corruptFile(file, s"its token set does not decode: $why")
    if (bytes.length < 32) throw fail("too short")
    val version = uint(bytes, 0, 8)
    if (version < 2 || version > 3) throw fail(s"fst version $version")
    val end = if (version >= 3) bytes.length - 4 else bytes.length
    val root = uint(bytes, end - 8, 8)
    if (root < 0 || root >= end - 16) throw fail(s"its root $root lies outside")
    val keys = ArrayBuffer.empty[Array[Byte]]
    val values = ArrayBuffer.empty[Long]
    var path = new Array[Byte](64)
    def walk(addr: Long, acc: Long, depth: Int): Unit = {
      if (depth > 100000) throw fail("too deep")
      val n = node(bytes, addr.toInt, version, fail)
      if (n.isFinal) { keys += java.util.Arrays.copyOf(path, depth); values += acc + n.finalOutput }
      if (depth == path.length) path = java.util.Arrays.copyOf(path, depth * 2)
      var i = 0
      while (i < n.inputs.length) {
        path(depth) = n.inputs(i).toByte
        // States are written before the states leading to them: a target lies below.
        if (n.addrs(i) >= addr || n.addrs(i) < 0) throw fail(s"a transition at $addr goes up")
        walk(n.addrs(i), acc + n.outputs(i), depth + 1)
        i += 1
      }
    }
    try walk(root, 0, 0)
    catch {
      case e: IndexOutOfBoundsException => throw fail(e.toString)
    }
    (keys.toArray, values.toArray)
  }

  private final case class Decoded(
      isFinal: Boolean,
      finalOutput: Long,
      inputs: Array[Int],
      outputs: Array[Long],
      addrs: Array[Long]
  )

  private def node(d: Array[Byte], addr: Int, version: Long, fail: String => Exception): Decoded = {
    if (addr == 0) return Decoded(true, 0, Array.empty, Array.empty, Array.empty)
    val v = d(addr) & 0xff
    def unpackDelta(at: Int, size: Int, end: Int): Long = {
      val delta = uint(d, at, size)
      if (delta == 0) 0L else end - delta
    }
    (v >> 6) match {
      case 3 =>
        val common = v & 0x3f
        val inp = if (common == 0) d(addr - 1) & 0xff else Inv(common)
        val end = addr - (if (common == 0) 1 else 0)
        Decoded(false, 0, Array(inp), Array(0L), Array(end - 1L))
      case 2 =>
        val common = v & 0x3f
        val inputLen = if (common == 0) 1 else 0
        val inp = if (common == 0) d(addr - 1) & 0xff else Inv(common)
        val sizes = d(addr - inputLen - 1) & 0xff
        val (tsize, osize) = (sizes >> 4, sizes & 0x0f)
        val end = addr - inputLen - 1 - tsize - osize
        val out = if (osize == 0) 0L else uint(d, addr - inputLen - 1 - tsize - osize, osize)
        val target = unpackDelta(addr - inputLen - 1 - tsize, tsize, end)
        Decoded(false, 0, Array(inp), Array(out), Array(target))
      case _ =>
        val isFinal = (v & 0x40) != 0
        val stateN = v & 0x3f
        val ntransLen = if (stateN == 0) 1 else 0
        val ntrans = if (stateN != 0) stateN
        else {
          val n = d(addr - 1) & 0xff
          if (n == 1) 256 else n
        }
        val sizes = d(addr - ntransLen - 1) & 0xff
        val (tsize, osize) = (sizes >> 4, sizes & 0x0f)
        val indexSize = if (version >= 2 && ntrans > 32) 256 else 0
        val base = addr - ntransLen - 1
        val totalTrans = ntrans + ntrans * tsize + indexSize
        val end = base - totalTrans - ntrans * osize - (if (isFinal) osize else 0)
        val inputs = Array.tabulate(ntrans)(i => d(base - indexSize - i - 1) & 0xff)
        val addrs = Array.tabulate(ntrans) { i =>
          unpackDelta(base - indexSize - ntrans - i * tsize - tsize, tsize, end)
        }
        val outputs = Array.tabulate(ntrans) { i =>
          if (osize == 0) 0L else uint(d, base - totalTrans - i * osize - osize, osize)
        }
        val fin = if (osize == 0 || !isFinal) 0L
        else uint(d, base - totalTrans - ntrans * osize - osize, osize)
        if (end < 0) throw fail(s"a state at $addr runs past the start")
        Decoded(isFinal, fin, inputs, outputs, addrs)
    }
  }

  private def uint(d: Array[Byte], at: Int, size: Int): Long = {
    var v = 0L
    var i = 0
    while (i < size) { v |= (d(at + i) & 0xffL) << (8 * i); i += 1 }
    v
  }
}
