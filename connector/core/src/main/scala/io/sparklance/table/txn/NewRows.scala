package io.sparklance.table.txn

import io.sparklance.table.commit.NewFragment

/**
 * A new fragment an Update writes: rows it moved out of existing fragments (rewritten with
 * new values) followed by rows it inserted. On a dataset with stable row ids, `keptRowIds`
 * are the row ids of the moved rows, in the order the fragment holds them: they keep their
 * ids, as pylance's update and merge_insert keep them; the inserted rows after them get
 * fresh ids at commit. Ignored on datasets without stable row ids (the address is the id).
 */
final case class NewRows(fragment: NewFragment, keptRowIds: Array[Long] = Array.emptyLongArray)
