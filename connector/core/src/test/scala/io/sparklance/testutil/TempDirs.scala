package io.sparklance.testutil

import java.nio.file.{Files, Path, StandardCopyOption}

import scala.jdk.CollectionConverters._

/** Scratch copies of fixtures, for tests that damage or change a dataset. */
object TempDirs {
  def create(prefix: String): Path = {
    val d = Files.createTempDirectory(prefix)
    d.toFile.deleteOnExit()
    d
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
  def copyOf(f: Fixture): Path = copyTree(f.path, create("lance-fixture-").resolve(f.path.getFileName.toString))
}
