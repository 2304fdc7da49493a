package io.sparklance.testutil

import java.nio.file.{Files, Path, StandardCopyOption}

import scala.jdk.CollectionConverters._

/**
 * Scratch copies of fixtures, for tests that damage or change a dataset. Every directory made
 * here is deleted, with what it holds, when the JVM exits (`deleteOnExit` skips non-empty
 * directories: a test run used to leave gigabytes under the temp directory).
 */
object TempDirs {
  private val created = new java.util.concurrent.ConcurrentLinkedQueue[Path]()

  Runtime.getRuntime.addShutdownHook(new Thread(new Runnable {
    override def run(): Unit = created.asScala.foreach(deleteTree)
  }))

  def create(prefix: String): Path = {
    val d = Files.createTempDirectory(prefix)
    created.add(d)
    d
  }

  private def deleteTree(root: Path): Unit =
    if (Files.exists(root)) {
      val all = Files.walk(root).iterator().asScala.toSeq.reverse
      all.foreach(p =>
        try Files.deleteIfExists(p)
        catch { case _: java.io.IOException => }
      )
    }

  def copyTree(src: Path, dst: Path): Path = {
    Files.walk(src).iterator().asScala.foreach { p =>
      val t = dst.resolve(src.relativize(p).toString)
      if (Files.isDirectory(p)) Files.createDirectories(t)
      else Files.copy(p, t, StandardCopyOption.REPLACE_EXISTING)
    }
    dst
  }

  /** A private copy of a fixture dataset. */
  def copyOf(f: Fixture): Path =
    copyTree(f.path, create("lance-fixture-").resolve(f.path.getFileName.toString))
}
