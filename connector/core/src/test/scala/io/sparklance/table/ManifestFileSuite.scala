package io.sparklance.table

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceCorruptFileException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.testutil.{Fixtures, TempDirs}

class ManifestFileSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()

  private def manifests(root: Path): Seq[Path] =
    Files.list(root.resolve("_versions")).iterator().asScala.filter(_.toString.endsWith(
      ".manifest"
    )).toSeq

  test("every manifest of every fixture decodes, with the version its name says") {
    Fixtures.all.foreach { f =>
      manifests(f.path).foreach { p =>
        val d = ManifestFile.read(io, p.toString)
        assert(
          d.manifest.getVersion == ManifestNaming.parse(p.getFileName.toString).get._1,
          p.toString
        )
        assert(d.fileSize == Files.size(p))
      }
    }
  }

  test("encode then decode keeps every field, unknown ones included") {
    Fixtures.all.foreach { f =>
      manifests(f.path).foreach { p =>
        val m = ManifestFile.read(io, p.toString).manifest
        val dir = TempDirs.create("manifest-")
        val out = dir.resolve("1.manifest")
        Files.write(out, ManifestFile.encode(m))
        val again = ManifestFile.read(io, out.toString).manifest
        assert(again == m, p.toString)
        assert(again.toByteString == m.toByteString, s"$p: bytes changed (unknown fields lost?)")
      }
    }
  }

  private def damaged(transform: Array[Byte] => Array[Byte]): (String, Throwable) = {
    val copy = TempDirs.copyOf(Fixtures("multifrag_2.2"))
    val victim = manifests(copy).maxBy(_.getFileName.toString)
    Files.write(victim, transform(Files.readAllBytes(victim)))
    (victim.toString, intercept[LanceCorruptFileException](ManifestFile.read(io, victim.toString)))
  }

  test("a truncated manifest is a clean error naming the file") {
    for (keep <- Seq(0, 3, 10, 20, 100)) {
      val (path, e) = damaged(b => b.take(math.min(keep, b.length - 1)))
      assert(e.getMessage.contains(path), e.getMessage)
    }
    val (path, e) = damaged(b => b.dropRight(7))
    assert(e.getMessage.contains(path))
  }

  test("a corrupt manifest is a clean error naming the file") {
    val cases: Seq[Array[Byte] => Array[Byte]] = Seq(
      b => { val c = b.clone(); c(c.length - 1) = 'X'; c }, // magic
      b => { val c = b.clone(); c(c.length - 16) = (c(c.length - 16) + 1).toByte; c }, // position
      b => {
        val c = b.clone(); java.util.Arrays.fill(c, 0, c.length - 16, 0xff.toByte); c
      }, // body
      b => {
        val c = b.clone(); var i = 8;
        while (i < c.length - 40) { c(i) = (c(i) ^ 0x5a).toByte; i += 1 }; c
      }
    )
    cases.foreach { t =>
      val (path, e) = damaged(t)
      assert(e.getMessage.contains(path), e.getMessage)
    }
  }
}
