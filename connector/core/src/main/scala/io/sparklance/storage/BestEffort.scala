package io.sparklance.storage

import org.slf4j.LoggerFactory

/**
 * Steps that must not hide the error being handled, nor fail a finished job: closing what a
 * read or write opened, deleting the files of a write that failed. A failure is logged, never
 * thrown: a file left behind is an orphan that `cleanup_old_versions` removes later, and a
 * close that fails has nothing left to undo. An interrupt is kept (the thread's flag set
 * again); the JVM's own errors (out of memory) pass.
 */
object BestEffort {
  private val log = LoggerFactory.getLogger("io.sparklance.storage.BestEffort")

  /** Closes `c` (nothing when null); a failure is logged at DEBUG. */
  def close(c: AutoCloseable): Unit =
    if (c != null)
      guard(e => log.debug("Could not close {}: {}", Array[AnyRef](c, e): _*))(c.close())

  /** Deletes `path`; a failure is logged at WARN, naming the path. */
  def delete(io: FileIO, path: String): Unit = {
    def report(e: String): Unit = log.warn(
      "Could not delete {} ({}); cleanup_old_versions removes it later",
      Array[AnyRef](path, e): _*
    )
    guard(report)(io.delete(path))
  }

  /** Runs `body` (e.g. a listing whose entries are deleted); a failure is logged at WARN. */
  def run(what: => String)(body: => Unit): Unit =
    guard(e => log.warn("Could not {}: {}", Array[AnyRef](what, e): _*))(body)

  private def guard(report: String => Unit)(body: => Any): Unit =
    try body
    catch {
      case e: VirtualMachineError => throw e
      case e: Throwable =>
        if (e.isInstanceOf[InterruptedException]) Thread.currentThread().interrupt()
        report(e.toString)
    }
}
