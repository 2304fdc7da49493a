package io.sparklance.format.writer

import io.sparklance.format.codec.{LittleEndian => LE}

/**
 * Byte strings numbered in order of first appearance, each copied once into the set's own
 * store, from whatever arrays they come: a page's dictionary entries, or the distinct values
 * a file has taken of a column as batches arrive. An open-addressing table of entry numbers;
 * no allocation per lookup.
 */
private[writer] final class DistinctValues(initial: Int = 256) {
  private val store = new ByteBuf(1024)
  private val starts = new IntBuf(initial)
  starts.add(0)

  /** Each entry's hash, to place the entries again when some are dropped. */
  private val entryHashes = new IntBuf(initial)
  private var slots = empty(Integer.highestOneBit(math.max(16, initial) * 2))
  private var hashes = new Array[Int](slots.length)

  /** Entries held. */
  def size: Int = starts.size - 1

  def clear(): Unit = truncate(0)

  /** Keeps the first `entries` entries (those added first), dropping the later ones. */
  def truncate(entries: Int): Unit = if (entries < size) {
    store.truncate(starts(entries)); starts.truncate(entries + 1); entryHashes.truncate(entries)
    java.util.Arrays.fill(slots, -1)
    var e = 0
    while (e < entries) { place(e, entryHashes(e)); e += 1 }
  }

  /** The entry number of `a[off, off + len)`, added as the next one if it is new. */
  def getOrAdd(a: Array[Byte], off: Int, len: Int): Int = {
    val h = hash(a, off, len)
    val s = find(a, off, len, h)
    if (s >= 0) return slots(s)
    val e = size
    if (2 * (e + 1) > slots.length) grow()
    place(e, h)
    entryHashes.add(h)
    store.bytes(a, off, len)
    starts.add(store.size)
    e
  }

  /** The entries' bytes, one after the other in entry order. */
  def bytes: ByteBuf = store

  /** Where entry `e` starts in [[bytes]] (`start(size)` is the end of the last one). */
  def start(e: Int): Int = starts(e)

  /** Every entry's start and the end of the last (`size + 1` offsets), the set's own buffer. */
  def offsets: IntBuf = starts

  /** The slot of an equal entry's number, or -1. */
  private def find(a: Array[Byte], off: Int, len: Int, h: Int): Int = {
    val mask = slots.length - 1
    var s = h & mask
    while (slots(s) >= 0) {
      val e = slots(s)
      if (hashes(s) == h) {
        val from = starts(e)
        if (
          starts(e + 1) - from == len &&
          java.util.Arrays.equals(store.array, from, from + len, a, off, off + len)
        ) return s
      }
      s = (s + 1) & mask
    }
    -1
  }

  private def place(e: Int, h: Int): Unit = {
    val mask = slots.length - 1
    var s = h & mask
    while (slots(s) >= 0) s = (s + 1) & mask
    slots(s) = e; hashes(s) = h
  }

  private def grow(): Unit = {
    val old = slots; val oldHashes = hashes
    slots = empty(old.length * 2); hashes = new Array[Int](slots.length)
    var s = 0
    while (s < old.length) { if (old(s) >= 0) place(old(s), oldHashes(s)); s += 1 }
  }

  private def empty(n: Int): Array[Int] = {
    val a = new Array[Int](n); java.util.Arrays.fill(a, -1); a
  }

  private def hash(a: Array[Byte], off: Int, len: Int): Int = {
    var h = 0x9e3779b97f4a7c15L ^ len
    var i = 0
    while (i + 8 <= len) {
      h = (h ^ LE.i64(a, off + i)) * 0xff51afd7ed558ccdL; h ^= h >>> 29; i += 8
    }
    if (i < len) h = (h ^ LE.loadPartial(a, off + i, len - i)) * 0xff51afd7ed558ccdL
    h = (h ^ (h >>> 32)) * 0xc4ceb9fe1a85ec53L
    (h ^ (h >>> 29)).toInt
  }
}
