package io.sparklance.storage

import org.slf4j.Logger

/** Whole directory trees: what a dropped table or a failed index leaves to delete. */
object FileTrees {

  /** Deletes `path` and, when it is a directory, everything below it. */
  def delete(io: FileIO, path: String): Unit = {
    if (io.isDirectory(path)) io.list(path).foreach(e => delete(io, e.path))
    io.delete(path)
  }

  /** As [[delete]], a failure logged rather than thrown: cleanup after another failure. */
  def deleteQuietly(io: FileIO, path: String, log: Logger): Unit =
    try delete(io, path)
    catch { case e: Exception => log.warn(s"Could not delete $path: ${e.getMessage}") }
}
