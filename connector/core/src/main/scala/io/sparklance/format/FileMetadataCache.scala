package io.sparklance.format

import java.util.concurrent.atomic.AtomicLong

import scala.reflect.ClassTag

import org.slf4j.LoggerFactory

/**
 * The metadata of Lance files, by path: what opening a v2 file reads ([[ContainerMeta]]:
 * footer, offset tables, column metadata, and the tail of the file, or all of a small file),
 * serving only the size it was read at, and other immutable things decoded from a file whose
 * path is never reused ([[FileMetadataCache.Entry]]: a fragment's deleted rows). Least
 * recently used first out once the entries hold more than `capacity` bytes (about what they
 * take on the heap); 0 keeps nothing; an entry that alone would take more than
 * `1 / maxEntryShare` of it is not kept (one file of huge metadata does not flush the rest).
 * Thread-safe.
 */
final class FileMetadataCache(initialCapacity: Long, maxEntryShare: Int = 8) {
  private val lock = new Object
  private val entries = new java.util.LinkedHashMap[String, FileMetadataCache.Entry](
    64,
    0.75f,
    /* accessOrder = */ true
  )
  private var used = 0L
  @volatile private var limit = initialCapacity
  private val hitCount = new AtomicLong
  private val missCount = new AtomicLong

  /** The current bound, in bytes. */
  def capacity: Long = limit

  /** Sets the bound (0 empties and turns the cache off), evicting what no longer fits. */
  def setCapacity(bytes: Long): Unit = lock.synchronized {
    require(bytes >= 0, s"a cache capacity cannot be negative ($bytes)")
    if (bytes != limit) {
      FileMetadataCache.log.info(s"Lance file metadata cache: capacity $bytes bytes (was $limit)")
      limit = bytes
      evict()
    }
  }

  /** The metadata of the file at `path` of `size` bytes, if held (another size is a miss). */
  def get(path: String, size: Long): Option[ContainerMeta] = counted(lookup(path) match {
    case m: ContainerMeta if m.fileSize == size => Some(m)
    case _ => None
  })

  /** Keeps `meta`, trimmed to what later opens read ([[ContainerMeta.forCache]]). */
  def put(meta: ContainerMeta): Unit = if (limit > 0) {
    val kept = meta.forCache
    putEntry(kept.path, kept)
  }

  /** What is held for `path` when it is a `T` (anything else held there is a miss). */
  def entryOf[T <: FileMetadataCache.Entry](path: String)(implicit t: ClassTag[T]): Option[T] =
    counted(lookup(path) match {
      case e: T => Some(e)
      case _ => None
    })

  /** Keeps `e` for `path` (replacing what was held), unless it is too large to keep. */
  def putEntry(path: String, e: FileMetadataCache.Entry): Unit = if (limit > 0) {
    val w = e.weight
    if (w <= limit / maxEntryShare) lock.synchronized {
      val old = entries.put(path, e)
      if (old != null) used -= old.weight
      used += w
      evict()
    }
  }

  /** Entries, bytes held, hits and misses since the last [[clear]]. */
  def stats: FileMetadataCache.Stats =
    lock.synchronized(FileMetadataCache.Stats(entries.size, used, hitCount.get, missCount.get))

  def clear(): Unit = lock.synchronized {
    entries.clear(); used = 0; hitCount.set(0); missCount.set(0)
  }

  /** What is held for `path`, or null; neither a hit nor a miss until the caller checks it. */
  private def lookup(path: String): FileMetadataCache.Entry =
    if (limit <= 0) null else lock.synchronized(entries.get(path))

  private def counted[T](found: Option[T]): Option[T] = {
    (if (found.isDefined) hitCount else missCount).incrementAndGet()
    found
  }

  private def evict(): Unit = {
    val it = entries.values.iterator
    while (used > limit && it.hasNext) { used -= it.next().weight; it.remove() }
  }
}

/**
 * This JVM's cache ([[shared]]): the metadata of the data files [[LanceFileReader.open]] opens
 * and of the index files a lookup opens ([[FileContainer.openKnown]]), when a manifest records
 * their sizes, and the deleted rows scans read (`DeletionVector.readShared`). A file is read
 * once per JVM rather than once per planning pass and per task, so planning (page
 * boundaries, null-free columns, the grouping sample, index lookups) and every later scan
 * read only pages. Like pylance's session metadata cache, it relies on Lance never writing
 * other contents under such a path (data, index and deletion file names are random).
 */
object FileMetadataCache {
  val DefaultCapacity: Long = 128L << 20

  private val log = LoggerFactory.getLogger(classOf[FileMetadataCache])

  val shared: FileMetadataCache = new FileMetadataCache(DefaultCapacity)

  final case class Stats(entries: Int, bytes: Long, hits: Long, misses: Long)

  /** What the cache holds: immutable, with about the bytes it takes on the heap. */
  trait Entry {
    def weight: Long
  }
}
