package io.sparklance.table.index

import java.io.ByteArrayOutputStream

import scala.collection.mutable.ArrayBuffer

/**
 * Writes a map from sorted byte strings to u64 values in the format of the Rust `fst` crate
 * (version 3), which an INVERTED index of pylance 14 keeps its token set in
 * (`part_N_tokens.lance`, column `_token_fst_bytes`). The bytes are those the crate writes
 * for the same keys and values (our implementation of its published format; checked against
 * pylance 14.0.2's files):
 *
 *  - a header of the version (3) and the fst type (0) as u64 little endian;
 *  - the states, compiled in reverse as their last key ends, each written once per
 *    equal state the crate's bounded registry remembers (10,000 rows of 2 cells, FNV-1a
 *    hash of the state, a new state replacing its row's least recently used), every state
 *    addressed by its last byte; a final state with no transition and no output is address 0
 *    and not written;
 *  - a footer of the number of keys and the root's address (u64) and the masked CRC-32C of
 *    all bytes before it (u32).
 *
 * A state is one of: one transition to the state written just before it without output
 * (`11` + input's common index or the input byte), one transition (`10`: output, address
 * delta, their pack sizes, input), or any number of transitions (`0f` + count: final output,
 * outputs, address deltas, inputs in reverse, a 256-byte index past 32 transitions, pack
 * sizes, count). Outputs along a key's path sum to its value, each transition taking the
 * least value of the keys below it.
 */
private[index] object FstBuilder {
  private val Version = 3L
  private val EmptyAddress = 0L
  private val NoneAddress = 1L
  private val TableRows = 10000
  private val TransIndexThreshold = 32

  /** The crate's 63 most common input bytes, by rank (their index + 1 fits in a state). */
  private val Common = "te/oasripcnw.hlm-du012g=:bf3y5&_4v9678k%?xCDASFIBEjPTzRNM+LOqHG"

  private final case class Trans(inp: Int, out: Long, addr: Long)
  private final case class Node(isFinal: Boolean, finalOutput: Long, trans: Vector[Trans])

  private final class Unfinished(var node: Node, var lastInp: Int, var lastOut: Long) {
    def hasLast: Boolean = lastInp >= 0
    def lastCompiled(addr: Long): Unit = if (hasLast) {
      node = node.copy(trans = node.trans :+ Trans(lastInp, lastOut, addr))
      lastInp = -1
      lastOut = 0
    }
    def addOutputPrefix(prefix: Long): Unit = {
      node = Node(
        node.isFinal,
        if (node.isFinal) prefix + node.finalOutput else node.finalOutput,
        node.trans.map(t => t.copy(out = prefix + t.out))
      )
      if (hasLast) lastOut = prefix + lastOut
    }
  }

  /** The fst of `keys` (strictly increasing, unsigned byte order) to `values`. */
  def build(keys: Array[Array[Byte]], values: Array[Long]): Array[Byte] =
    new FstBuilder().build(keys, values)

  private[index] def commonIndex(b: Int): Int = {
    val i = Common.indexOf(b.toChar)
    if (b < 128 && i >= 0) i + 1 else 0
  }

  private def packSize(n: Long): Int = {
    var size = 1
    while (size < 8 && (n >>> (8 * size)) != 0) size += 1
    size
  }
}

private final class FstBuilder {
  import FstBuilder._

  private val out = new ByteArrayOutputStream()
  private val stack = ArrayBuffer(new Unfinished(Node(false, 0, Vector.empty), -1, 0))
  private val cellAddr = Array.fill(TableRows * 2)(NoneAddress)
  private val cellNode = new Array[Node](TableRows * 2)
  private var lastAddr = NoneAddress
  private var count = 0L

  def build(keys: Array[Array[Byte]], values: Array[Long]): Array[Byte] = {
    writeU64(Version)
    writeU64(0)
    var k = 0
    while (k < keys.length) { insert(keys(k), values(k)); k += 1 }
    compileFrom(0)
    val root = stack.remove(0).node
    val rootAddr = compile(root)
    writeU64(count)
    writeU64(rootAddr)
    val crc = new java.util.zip.CRC32C()
    val bytes = out.toByteArray
    crc.update(bytes, 0, bytes.length)
    val sum = crc.getValue.toInt
    val masked = ((sum >>> 15) | (sum << 17)) + 0xa282ead8
    (0 until 4).foreach(i => out.write(masked >>> (8 * i)))
    out.toByteArray
  }

  private def insert(key: Array[Byte], value: Long): Unit = {
    if (key.isEmpty) {
      count = 1
      stack(0).node = stack(0).node.copy(isFinal = true, finalOutput = value)
      return
    }
    // The common prefix with the key before, each transition on it keeping the least output.
    var outV = value
    var i = 0
    var go = true
    while (go && i < key.length) {
      val u = stack(i)
      if (u.hasLast && u.lastInp == (key(i) & 0xff)) {
        i += 1
        val common = math.min(u.lastOut, outV)
        val add = u.lastOut - common
        outV -= common
        u.lastOut = common
        if (add != 0) stack(i).addOutputPrefix(add)
      } else go = false
    }
    if (i == key.length) return
    count += 1
    compileFrom(i)
    val top = stack.last
    top.lastInp = key(i) & 0xff
    top.lastOut = outV
    var j = i + 1
    while (j < key.length) {
      stack += new Unfinished(Node(false, 0, Vector.empty), key(j) & 0xff, 0)
      j += 1
    }
    stack += new Unfinished(Node(true, 0, Vector.empty), -1, 0)
  }

  private def compileFrom(istate: Int): Unit = {
    var addr = NoneAddress
    while (istate + 1 < stack.length) {
      val u = stack.remove(stack.length - 1)
      if (addr != NoneAddress) u.lastCompiled(addr)
      addr = compile(u.node)
    }
    stack.last.lastCompiled(addr)
  }

  private def hash(n: Node): Int = {
    val prime = 1099511628211L
    var h = 0xcbf29ce484222325L
    h = (h ^ (if (n.isFinal) 1L else 0L)) * prime
    h = (h ^ n.finalOutput) * prime
    n.trans.foreach { t =>
      h = (h ^ t.inp.toLong) * prime
      h = (h ^ t.out) * prime
      h = (h ^ t.addr) * prime
    }
    java.lang.Long.remainderUnsigned(h, TableRows.toLong).toInt
  }

  private def compile(n: Node): Long = {
    if (n.isFinal && n.trans.isEmpty && n.finalOutput == 0) return EmptyAddress
    // The crate's registry: two cells a row, most recently used first.
    val c = hash(n) * 2
    def holds(i: Int) = cellAddr(i) != NoneAddress && cellNode(i) == n
    if (holds(c)) return cellAddr(c)
    if (holds(c + 1)) {
      val a = cellAddr(c + 1)
      swap(c, c + 1)
      return a
    }
    // Not found: the least recently used cell takes the state and becomes the first.
    cellNode(c + 1) = n
    swap(c, c + 1)
    val start = out.size().toLong
    write(n, start)
    lastAddr = out.size().toLong - 1
    cellAddr(c) = lastAddr
    lastAddr
  }

  private def swap(a: Int, b: Int): Unit = {
    val (x, y) = (cellAddr(a), cellNode(a))
    cellAddr(a) = cellAddr(b); cellNode(a) = cellNode(b)
    cellAddr(b) = x; cellNode(b) = y
  }

  private def write(n: Node, addr: Long): Unit = {
    def delta(t: Trans) = if (t.addr == EmptyAddress) EmptyAddress else addr - t.addr
    if (n.trans.length != 1 || n.isFinal) writeAny(n, addr, delta)
    else {
      val t = n.trans(0)
      val common = commonIndex(t.inp)
      if (t.addr == lastAddr && t.out == 0) {
        if (common == 0) out.write(t.inp)
        out.write(0xc0 | common)
      } else {
        val osize = if (t.out == 0) 0 else { val s = packSize(t.out); pack(t.out, s); s }
        val tsize = packSize(delta(t))
        pack(delta(t), tsize)
        out.write((tsize << 4) | osize)
        if (common == 0) out.write(t.inp)
        out.write(0x80 | common)
      }
    }
  }

  private def writeAny(n: Node, addr: Long, delta: Trans => Long): Unit = {
    var tsize = 0
    var osize = packSize(n.finalOutput)
    var anyOuts = n.finalOutput != 0
    n.trans.foreach { t =>
      tsize = math.max(tsize, packSize(delta(t)))
      osize = math.max(osize, packSize(t.out))
      anyOuts = anyOuts || t.out != 0
    }
    val sizes = (tsize << 4) | (if (anyOuts) osize else 0)
    val ntrans = n.trans.length
    val inState = (ntrans & 0xff) <= 0x3f
    val state = (if (n.isFinal) 0x40 else 0) | (if (inState) ntrans & 0xff else 0)
    val rev = n.trans.reverse
    if (anyOuts) {
      if (n.isFinal) pack(n.finalOutput, osize)
      rev.foreach(t => pack(t.out, osize))
    }
    rev.foreach(t => pack(delta(t), tsize))
    rev.foreach(t => out.write(t.inp))
    if (ntrans > TransIndexThreshold) {
      val index = Array.fill[Byte](256)(-1)
      n.trans.zipWithIndex.foreach { case (t, i) => index(t.inp) = i.toByte }
      out.write(index, 0, 256)
    }
    out.write(sizes)
    if ((state & 0x3f) == 0) out.write(if (ntrans == 256) 1 else ntrans)
    out.write(state)
  }

  private def pack(v: Long, size: Int): Unit = {
    var i = 0
    while (i < size) { out.write((v >>> (8 * i)).toInt & 0xff); i += 1 }
  }

  private def writeU64(v: Long): Unit = pack(v, 8)
}
