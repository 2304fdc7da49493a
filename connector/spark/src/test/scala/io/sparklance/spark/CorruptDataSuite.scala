package io.sparklance.spark

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import io.sparklance.testutil.{Fixtures, TempDirs}

/** Damaged data and deletion files fail the query with an error naming the file; never wrong rows. */
class CorruptDataSuite extends SparkSessionSuite {

  private def files(root: Path, dir: String): Seq[Path] =
    Files.list(root.resolve(dir)).iterator().asScala.toSeq.sortBy(_.toString)

  private def failure(path: Path): String = {
    val e = intercept[Exception](spark.read.format("lance").load(path.toString).collect())
    Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString(
      " | "
    )
  }

  for (format <- Seq("legacy", "2.0", "2.1", "2.2")) {
    test(s"a truncated data file ($format) names the file") {
      val copy = TempDirs.copyOf(Fixtures(s"multifrag_$format"))
      val victim = files(copy, "data").head
      val bytes = Files.readAllBytes(victim)
      Files.write(victim, bytes.take(bytes.length / 2))
      val m = failure(copy)
      assert(m.contains(victim.getFileName.toString), m)
    }

    // Lance files carry no checksums, so garbage inside raw values cannot always be noticed;
    // what must hold is that structure damage never escapes as a raw exception or a wrong row count.
    test(
      s"a data file with garbage in the middle ($format) fails cleanly, naming the file, or keeps its row count"
    ) {
      val f = Fixtures(s"types_$format")
      val copy = TempDirs.copyOf(f)
      val victim = files(copy, "data").head
      val bytes = Files.readAllBytes(victim)
      java.util.Arrays.fill(bytes, bytes.length / 3, bytes.length / 3 + 4096, 0x5a.toByte)
      Files.write(victim, bytes)
      val outcome =
        try Right(spark.read.format("lance").load(copy.toString).collect().length)
        catch {
          case e: Exception => Left(Iterator.iterate[Throwable](e)(_.getCause).takeWhile(
              _ != null
            ).map(_.getMessage).mkString(" | "))
        }
      outcome match {
        case Left(m) => assert(m.contains(victim.getFileName.toString), m)
        case Right(n) => assert(n == f.version(f.latestVersion).countRows)
      }
    }
  }

  test("a damaged deletion file names the file") {
    val copy = TempDirs.copyOf(Fixtures("deletions_bitmap_2.2"))
    files(copy, "_deletions").foreach(p => Files.write(p, Array[Byte](1, 2, 3)))
    val m = failure(copy)
    assert(m.contains("_deletions"), m)
  }

  test("a missing data file names the file") {
    val copy = TempDirs.copyOf(Fixtures("multifrag_2.2"))
    val victim = files(copy, "data").head
    Files.delete(victim)
    val m = failure(copy)
    assert(m.contains(victim.getFileName.toString), m)
  }
}
