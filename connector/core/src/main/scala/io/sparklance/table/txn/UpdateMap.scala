package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.proto.TransactionProtos.Transaction

/**
 * Lance's `UpdateMap`: changes to one string map of the table (config, table metadata, schema
 * or field metadata). An entry with a value sets the key, one without removes it; `replace`
 * makes the entries with values the whole map.
 */
final case class UpdateMap(entries: Seq[(String, Option[String])], replace: Boolean = false) {

  /** Keys this update gives a value. */
  def upserted: Set[String] = entries.collect { case (k, Some(_)) => k }.toSet

  /** Keys this update removes. */
  def deleted: Set[String] = entries.collect { case (k, None) => k }.toSet

  /** `current` after this update, as Lance's `apply_update_map` leaves it. */
  def applyTo[V](current: Map[String, V], value: String => V): Map[String, V] = {
    val start = if (replace) Map.empty[String, V] else current
    entries.foldLeft(start) {
      case (m, (k, Some(v))) => m.updated(k, value(v))
      case (m, (k, None)) => if (replace) m else m - k
    }
  }

  def toProto: Transaction.UpdateMap = {
    val b = Transaction.UpdateMap.newBuilder().setReplace(replace)
    entries.foreach { case (k, v) =>
      val e = Transaction.UpdateMapEntry.newBuilder().setKey(k)
      v.foreach(e.setValue)
      b.addUpdateEntries(e)
    }
    b.build()
  }
}

object UpdateMap {

  /** Sets these keys. */
  def set(values: Map[String, String]): UpdateMap =
    UpdateMap(values.toSeq.sortBy(_._1).map { case (k, v) => k -> Some(v) })

  /** Removes these keys. */
  def remove(keys: Iterable[String]): UpdateMap = UpdateMap(keys.toSeq.distinct.map(_ -> None))

  def fromProto(p: Transaction.UpdateMap): UpdateMap = UpdateMap(
    p.getUpdateEntriesList.asScala.toSeq.map { e =>
      e.getKey -> (if (e.hasValue) Some(e.getValue) else None)
    },
    p.getReplace
  )
}
