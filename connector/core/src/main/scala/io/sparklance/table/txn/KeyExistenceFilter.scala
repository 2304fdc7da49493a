package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import com.google.protobuf.ByteString

import io.sparklance.proto.TransactionProtos.Transaction

/**
 * Lance's record of the keys a primary-key merge inserted (`Update.inserted_rows`), which
 * concurrent merges on the same key compare to find a key both inserted: `fieldIds` are the
 * key's fields; the data a Bloom filter ([[KeyBloom]], what pylance 14 writes and this
 * connector writes) or a set of key hashes (which no Bloom filter compares with).
 */
final case class KeyExistenceFilter(fieldIds: Seq[Int], data: KeyExistenceFilter.Data) {
  import KeyExistenceFilter._

  /**
   * Whether the two may share a key, as Lance decides it: Bloom filters of one configuration
   * when any bit is set in both; hash sets when a hash is in both; otherwise (a Bloom filter
   * and a hash set, or Bloom filters configured differently) they are taken to.
   */
  def mayIntersect(other: KeyExistenceFilter): Boolean = (data, other.data) match {
    case (a: Bloom, b: Bloom) =>
      val sameConfig = a.numberOfItems == b.numberOfItems &&
        math.abs(a.probability - b.probability) <= Math.ulp(1.0) &&
        a.bitmap.length == b.bitmap.length
      if (!sameConfig) true
      else a.bitmap.indices.exists(i => (a.bitmap(i) & b.bitmap(i)) != 0)
    case (ExactSet(a), ExactSet(b)) => a.exists(b.contains)
    case _ => true
  }

  def toProto: Transaction.KeyExistenceFilter = {
    val b = Transaction.KeyExistenceFilter.newBuilder()
      .addAllFieldIds(fieldIds.map(Int.box).asJava)
    data match {
      case Bloom(bits, n, p) =>
        b.setBloom(Transaction.BloomFilter.newBuilder().setBitmap(ByteString.copyFrom(bits))
          .setNumBits(bits.length * 8).setNumberOfItems(n).setProbability(p))
      case ExactSet(hashes) =>
        b.setExact(Transaction.ExactKeySetFilter.newBuilder()
          .addAllKeyHashes(hashes.toSeq.sorted.map(Long.box).asJava))
    }
    b.build()
  }
}

object KeyExistenceFilter {
  sealed trait Data

  final case class Bloom(bitmap: Array[Byte], numberOfItems: Long, probability: Double)
      extends Data {
    override def equals(o: Any): Boolean = o match {
      case Bloom(b, n, p) => java.util.Arrays.equals(bitmap, b) && n == numberOfItems &&
        p == probability
      case _ => false
    }
    override def hashCode: Int = java.util.Arrays.hashCode(bitmap)
  }

  final case class ExactSet(hashes: Set[Long]) extends Data

  /** As Lance reads one: a Bloom filter's unset configuration is the default one. */
  def fromProto(p: Transaction.KeyExistenceFilter): KeyExistenceFilter = {
    val ids = p.getFieldIdsList.asScala.map(_.intValue).toSeq
    val data = p.getDataCase match {
      case Transaction.KeyExistenceFilter.DataCase.BLOOM =>
        val b = p.getBloom
        Bloom(
          b.getBitmap.toByteArray,
          if (b.getNumberOfItems == 0) KeyBloom.NumberOfItems else b.getNumberOfItems,
          if (b.getProbability == 0.0) KeyBloom.Probability else b.getProbability
        )
      case Transaction.KeyExistenceFilter.DataCase.EXACT =>
        ExactSet(p.getExact.getKeyHashesList.asScala.map(_.longValue).toSet)
      case _ => ExactSet(Set.empty)
    }
    KeyExistenceFilter(ids, data)
  }
}
