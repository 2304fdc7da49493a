package io.sparklance.table

import io.sparklance.format.LanceFileReader
import io.sparklance.storage.FileIO

/**
 * Whether a dataset version's top-level column provably holds no null: in every fragment
 * with rows, the first data file holding the column (the one the reader takes it from) says
 * in its page metadata that all its items are valid ([[LanceFileReader.provesNoNulls]]).
 * Reads each such file's tail, never a page; gives up (false) beyond [[MaxFiles]] fragments,
 * so planning a large table does not open thousands of files.
 */
object NullFreeColumns {
  val MaxFiles = 256

  def proven(io: FileIO, snapshot: Snapshot, column: String): Boolean =
    snapshot.schema.field(column).exists { field =>
      val fragments = snapshot.fragments
      fragments.length <= MaxFiles && fragments.forall { proto =>
        val f = FragmentRef(snapshot.root, snapshot, proto)
        f.physicalRows == 0 || f.files.find(_.holds(field.id)).exists { df =>
          val reader = LanceFileReader.open(io, df.path, df.major, df.minor, df.fileFields)
          try reader.provesNoNulls(field) finally reader.close()
        }
      }
    }
}
