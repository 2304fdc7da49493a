package io.sparklance.table

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.Fixtures

class ManifestNamingSuite extends AnyFunSuite {

  test(
    "every fixture's manifest file names parse to the versions pylance reports, under the expected scheme"
  ) {
    Fixtures.all.foreach { f =>
      val names =
        Files.list(f.path.resolve("_versions")).iterator().asScala.map(_.getFileName.toString).toSeq
      val parsed = names.flatMap(ManifestNaming.parse)
      assert(parsed.map(_._1).sorted == f.versions.map(_.version).sorted, s"$f: $names")
      val expectedScheme = f.json.get("manifest_naming").asText()
      assert(parsed.map(_._2.name).distinct == Seq(expectedScheme), f.toString)
      // Writing a name back gives the file pylance wrote.
      parsed.foreach { case (v, scheme) => assert(names.contains(scheme.fileName(v)), s"$f v$v") }
    }
  }

  test("V2 names sort newest first and round-trip at the edges of the range") {
    val vs = Seq(1L, 2L, 9L, 10L, 1000000L, Long.MaxValue - 1)
    vs.foreach(v =>
      assert(ManifestNaming.parse(ManifestNaming.V2.fileName(v)).contains((v, ManifestNaming.V2)))
    )
    vs.foreach(v =>
      assert(ManifestNaming.parse(ManifestNaming.V1.fileName(v)).contains((v, ManifestNaming.V1)))
    )
    val names = vs.map(ManifestNaming.V2.fileName)
    assert(names.sorted == names.reverse)
    assert(names.forall(_.length == 29))
  }

  test("staging, detached and foreign files are not versions") {
    Seq(
      ".tmp-1.manifest",
      "d3.manifest",
      "3.txn",
      "latest_version_hint.json",
      "x.manifest",
      ".manifest",
      "1.manifest.tmp"
    )
      .foreach(n => assert(ManifestNaming.parse(n).isEmpty, n))
  }
}
