package io.sparklance.table.txn

/** One row of the external manifest store: where `version`'s manifest is, and its size. */
final case class ManifestRecord(version: Long, path: String, size: Option[Long]) {

  /** A staging manifest (`….manifest-{uuid}`) not yet copied to its final name. */
  def staged: Boolean = !path.endsWith(".manifest")
}
