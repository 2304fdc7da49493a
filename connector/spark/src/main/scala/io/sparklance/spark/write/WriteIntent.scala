package io.sparklance.spark.write

import io.sparklance.table.Snapshot

/**
 * What a write must do beyond its options, set by the code that starts it (a save mode, a
 * CREATE TABLE) rather than by the user: kept apart from the options so that no user option
 * can set it and no internal setting travels through an options map.
 *
 * @param createOnly   the write creates the dataset and fails if one appears meanwhile (a save
 *                     with error-if-exists or ignore, CREATE TABLE ... AS SELECT).
 * @param tableConfig  table config the created or replaced dataset starts with (TBLPROPERTIES).
 * @param found        what the save found at the path, so that planning does not read it
 *                     again: `Some(Some(v))` the latest version `v`, `Some(None)` no dataset;
 *                     `None` (not looked) reads it. A version of another path is not used.
 * @param replaceWhere a save's `replaceWhere` condition: the rows it matches are replaced.
 */
final case class WriteIntent(
    createOnly: Boolean = false,
    tableConfig: Map[String, String] = Map.empty,
    found: Option[Option[Snapshot]] = None,
    replaceWhere: Option[String] = None
)

object WriteIntent {
  val Plain: WriteIntent = WriteIntent()
}
