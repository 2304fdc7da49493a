package io.sparklance.table.txn

import java.nio.charset.StandardCharsets.UTF_8

import net.jpountz.xxhash.XXHashFactory

/**
 * The keys of the rows a primary-key merge inserts, as Lance's `KeyExistenceFilter` holds
 * them: a split block Bloom filter (Parquet's SBBF: blocks of eight 32-bit words, one bit
 * set in each word per key) of pylance's one fixed size, 32 KiB — what Lance sizes for 8192
 * keys at a false positive rate of 0.00057 (1024 blocks, as pylance 14 writes it), so that
 * any two filters compare — over the
 * xxHash64 (seed 0) of each key's bytes ([[KeyBloom.Key]]). Filters of several tasks merge
 * by OR. Not thread-safe.
 */
final class KeyBloom private (private val words: Array[Int]) extends Serializable {
  import KeyBloom._

  def this() = this(new Array[Int](KeyBloom.Blocks * 8))

  /** Adds a key given as its bytes ([[KeyBloom.Key]] makes them). */
  def add(key: Array[Byte]): Unit = addHash(hasher.hash(key, 0, key.length, 0L))

  private def addHash(hash: Long): Unit = {
    // The block: the high 32 bits scaled to the block count; the bits: the low 32 bits salted.
    val block = (((hash >>> 32) * Blocks) >>> 32).toInt
    val x = hash.toInt
    var i = 0
    while (i < 8) {
      words(block * 8 + i) |= 1 << ((x * Salt(i)) >>> 27)
      i += 1
    }
  }

  /** Adds every key of `other`. */
  def or(other: KeyBloom): Unit = {
    var i = 0
    while (i < words.length) { words(i) |= other.words(i); i += 1 }
  }

  /** The filter's bytes as Lance stores them: the words in order, little-endian. */
  def bytes: Array[Byte] = {
    val out = java.nio.ByteBuffer.allocate(words.length * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    out.asIntBuffer().put(words)
    out.array()
  }

  def toFilter(fieldIds: Seq[Int]): KeyExistenceFilter =
    KeyExistenceFilter(fieldIds, KeyExistenceFilter.Bloom(bytes, NumberOfItems, Probability))
}

object KeyBloom {

  /** Lance's fixed configuration: 8192 keys at 0.00057, i.e. 32 KiB (1024 blocks). */
  val NumberOfItems = 8192L
  val Probability = 0.00057
  val Blocks = 1024

  private val Salt = Array(0x47b6137b, 0x44974d91, 0x8824ad5b, 0xa2b7289d, 0x705495c7,
    0x2df1424b, 0x9efc4947, 0x5c6bfb31)

  @transient private lazy val hasher = XXHashFactory.fastestJavaInstance().hash64()

  def fromBytes(bytes: Array[Byte]): KeyBloom = {
    require(bytes.length == Blocks * 32, s"a key filter of ${bytes.length} bytes, not 32 KiB")
    val words = new Array[Int](Blocks * 8)
    java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(words)
    new KeyBloom(words)
  }

  /**
   * Key bytes as Lance hashes them: signed and unsigned integers as 8 little-endian bytes
   * (narrower ones widened), strings as UTF-8, binaries as they are; a key of several
   * columns is each part followed by a zero byte.
   */
  object Key {
    def long(v: Long): Array[Byte] =
      java.nio.ByteBuffer.allocate(8).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(v).array()

    def string(s: String): Array[Byte] = s.getBytes(UTF_8)

    def composite(parts: Seq[Array[Byte]]): Array[Byte] = {
      val out = new Array[Byte](parts.map(_.length + 1).sum)
      var at = 0
      parts.foreach { p => System.arraycopy(p, 0, out, at, p.length); at += p.length + 1 }
      out
    }
  }
}
