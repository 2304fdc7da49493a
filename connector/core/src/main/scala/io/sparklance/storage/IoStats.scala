package io.sparklance.storage

/**
 * Storage requests and bytes read, counted per thread: a Spark task reads on its own thread,
 * so what a scan task issued is the difference between two readings of its thread's counters.
 * Every store counts at its request boundary: one HTTP request to S3 (retries included), one
 * positioned read, listing or status call through Hadoop.
 */
object IoStats {
  final class Counters {
    var requests = 0L
    var bytesRead = 0L
  }

  private val current = ThreadLocal.withInitial[Counters](() => new Counters)

  /** This thread's counters (cumulative; take differences). */
  def get: Counters = current.get

  /** One request that read `bytes` bytes (0 for metadata calls). */
  def request(bytes: Long): Unit = {
    val c = current.get
    c.requests += 1
    c.bytesRead += bytes
  }
}
