package io.sparklance.testutil

/**
 * A dataset with a history pylance made (`cleanup_ops.make_history`: appends, an index, a
 * delete, an update, a tag, an overwrite) and a copy of it (`cleanup_ops.twin`, file times
 * kept): ours to change with our code, theirs with pylance's.
 */
object HistoryTwins {
  def make(prefix: String, stable: Boolean = false): (String, String) = {
    Pylance.require()
    val dir = TempDirs.create(prefix)
    val ours = dir.resolve("ours").toString
    Pylance.call("cleanup_ops", "make_history", ours, stable)
    val theirs = dir.resolve("theirs").toString
    Pylance.call("cleanup_ops", "twin", ours, theirs)
    (ours, theirs)
  }
}
