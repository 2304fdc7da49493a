package io.sparklance.table.commit

/**
 * Fault injection for crash tests: holds the committing thread at one named point of the
 * commit so a test can kill the whole process there and check what a crash at that instant
 * leaves behind (see tests/write/test_write_kill.py).
 *
 * Off unless the JVM system property `sparklance.test.commitPause` is `<point>:<millis>`, or
 * `<point>@<n>:<millis>` to hold the n-th commit of the process reaching the point (an
 * operation that commits twice, like a compaction); the check is one property lookup per
 * commit attempt. Points, in commit order:
 *  - `before-transaction`: data files are written, nothing of the commit is;
 *  - `before-manifest`: the `.txn` file is written, the manifest is not;
 *  - `after-manifest`: the new version is committed, the version hint is not yet updated.
 */
private[sparklance] object CommitPauses {
  val Property = "sparklance.test.commitPause"
  val Points: Set[String] = Set("before-transaction", "before-manifest", "after-manifest")

  /** How many times this process reached each point. */
  private val reached = new java.util.concurrent.ConcurrentHashMap[String, Integer]()

  def at(point: String): Unit = {
    val spec = System.getProperty(Property)
    if (spec == null) return
    val i = spec.lastIndexOf(':')
    val (name, millis) =
      if (i < 0) (spec, 60000L) else (spec.substring(0, i), spec.substring(i + 1).toLong)
    val at = name.indexOf('@')
    val (target, nth) =
      if (at < 0) (name, 1) else (name.substring(0, at), name.substring(at + 1).toInt)
    if (target == point && reached.merge(point, 1, _ + _) == nth) {
      // A test waits for this exact line on the process's stderr before it kills the process.
      System.err.println(s"sparklance: commit paused at $point")
      System.err.flush()
      Thread.sleep(millis)
    }
  }
}
