package io.sparklance.table

import io.sparklance.format.LanceFileReader
import io.sparklance.storage.FileIO

/**
 * The top-level columns of a dataset version that provably hold no null: in every fragment
 * with rows, the first data file holding the column (the one the reader takes it from) says
 * in its page metadata that all its items are valid ([[LanceFileReader.provenNullFree]]).
 * Reads each such file's tail once for all columns, never a page; proves nothing beyond
 * [[MaxFiles]] fragments, so planning a large table does not open thousands of files.
 */
object NullFreeColumns {
  val MaxFiles = 256

  def proven(io: FileIO, snapshot: Snapshot): Set[String] = {
    val fragments = snapshot.fragments
    // Nested columns are never proven (their nulls sit in several layers).
    var left = snapshot.schema.fields.filter(_.children.isEmpty)
    if (fragments.length > MaxFiles) left = Nil
    val it = fragments.iterator
    while (left.nonEmpty && it.hasNext) {
      val f = FragmentRef(snapshot.root, snapshot, it.next())
      if (f.physicalRows != 0) {
        // A column no file of the fragment holds reads as nulls there: not proven.
        left = left.groupBy(field => f.files.find(_.holds(field.id))).toSeq.flatMap {
          case (None, _) => Nil
          case (Some(df), fields) =>
            val reader = df.open(io)
            try reader.provenNullFree(fields)
            finally reader.close()
        }
      }
    }
    left.map(_.name).toSet
  }
}
