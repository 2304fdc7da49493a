package io.sparklance.format.writer

import java.lang.ref.SoftReference

import io.sparklance.format.LanceField

/**
 * Finished file writers kept, per JVM, for their column buffers. A task's first data file
 * takes over the buffers of a file an earlier task finished, as a task's later files take
 * over those of its own previous file, so that a file does not grow each column's first page
 * from a few KiB by copying and zeroing: a fifth of the CPU of a Spark write of TPC-H
 * `orders`, whose files are one or two pages a column. An executor runs its tasks one after
 * another, most of them writing files of the same table.
 *
 * Writers are referenced softly, so the collector frees them before memory runs short, and
 * at most one per processor and an eighth of the heap in all are kept, the oldest dropped
 * first. A writer taken is removed: its buffers have one user at a time.
 */
object FinishedWriters {
  private final class Kept(w: LanceFileWriter, val bytes: Long) {
    val ref = new SoftReference(w)
  }

  /** Oldest first. */
  private val kept = new java.util.ArrayDeque[Kept]()
  private var keptBytes = 0L

  private def maxWriters: Int = math.max(1, Runtime.getRuntime.availableProcessors)
  private def maxBytes: Long = Runtime.getRuntime.maxMemory / 8

  /** A kept writer whose buffers fit a new writer of `fields` in `version`, or null. */
  def take(fields: Seq[LanceField], version: FileVersion): LanceFileWriter =
    if (!version.structural) null
    else synchronized {
      val it = kept.descendingIterator()
      var found: LanceFileWriter = null
      while (found == null && it.hasNext) {
        val k = it.next()
        val w = k.ref.get
        if (w == null || w.canHandOver(fields, version)) {
          it.remove(); keptBytes -= k.bytes
          found = w
        }
      }
      found
    }

  /** Keeps `w` (finished, no longer used by its owner) for a later writer to take over. */
  def give(w: LanceFileWriter): Unit =
    if (w != null && w.canHandOver(w.fields, w.version)) {
      val bytes = w.bufferBytes
      if (bytes <= maxBytes) synchronized {
        kept.addLast(new Kept(w, bytes)); keptBytes += bytes
        while (kept.size > maxWriters || keptBytes > maxBytes) keptBytes -= kept.removeFirst().bytes
      }
    }
}
