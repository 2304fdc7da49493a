package io.sparklance.table

import java.nio.file.Files

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.{LanceCorruptFileException, LanceNotFoundException}
import io.sparklance.storage.HadoopFileIO
import io.sparklance.testutil.{Fixtures, TempDirs}

class LanceDatasetSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()

  test("versions, latest version, tags and commit times match pylance for every fixture") {
    Fixtures.all.foreach { f =>
      val ds = LanceDataset.open(io, f.path.toString)
      assert(ds.versions().map(_.version) == f.versions.map(_.version), f.toString)
      assert(ds.latestVersion() == f.latestVersion, f.toString)
      assert(ds.tags().map(t => t.name -> t.version).toMap == f.tags, f.toString)
      assert(ds.open(VersionSpec.Latest).version == f.latestVersion)
      f.versions.foreach { v =>
        assert(
          ds.open(VersionSpec.Number(v.version)).timestampMicros == v.timestampMicros,
          v.toString
        )
      }
    }
  }

  test("row counts from metadata match pylance's count_rows at every version") {
    Fixtures.all.foreach { f =>
      val ds = LanceDataset.open(io, f.path.toString)
      f.versions.foreach { v =>
        assert(
          RowCounts.count(io, ds.open(VersionSpec.Number(v.version))) == v.countRows,
          v.toString
        )
      }
    }
  }

  test("a tag opens the version it points at") {
    val f = Fixtures.all.find(_.tags.nonEmpty).get
    val ds = LanceDataset.open(io, f.path.toString)
    f.tags.foreach { case (name, v) => assert(ds.open(VersionSpec.TagName(name)).version == v) }
  }

  test("as-of a time opens the newest version committed by then") {
    Fixtures.all.filter(_.versions.size > 1).foreach { f =>
      val ds = LanceDataset.open(io, f.path.toString)
      f.versions.foreach { v =>
        assert(ds.open(VersionSpec.AsOf(v.timestampMicros)).version == v.version, v.toString)
      }
      val first = f.versions.head.timestampMicros
      val e = intercept[LanceNotFoundException](ds.open(VersionSpec.AsOf(first - 1)))
      assert(e.getMessage.contains(ds.root))
    }
  }

  test("missing paths, non-datasets, unknown versions and tags are clean errors naming the path") {
    val tmp = TempDirs.create("not-lance-")
    val missing = tmp.resolve("nope").toString
    assert(
      intercept[LanceNotFoundException](LanceDataset.open(io, missing)).getMessage.contains(missing)
    )
    val e = intercept[LanceNotFoundException](LanceDataset.open(io, tmp.toString))
    assert(e.getMessage.contains("Not a Lance dataset") && e.getMessage.contains(tmp.toString))
    val file = Files.write(tmp.resolve("f.txt"), Array[Byte](1, 2))
    assert(intercept[LanceNotFoundException](
      LanceDataset.open(io, file.toString)
    ).getMessage.contains(file.toString))

    val f = Fixtures("multifrag_2.2")
    val ds = LanceDataset.open(io, f.path.toString)
    val ev = intercept[LanceNotFoundException](ds.open(VersionSpec.Number(99)))
    assert(ev.getMessage.contains("Version 99") && ev.getMessage.contains(ds.root))
    val et = intercept[LanceNotFoundException](ds.open(VersionSpec.TagName("nope")))
    assert(et.getMessage.contains("'nope'") && et.getMessage.contains("v1tag"))
  }

  test("a manifest whose name and content disagree is refused") {
    val copy = TempDirs.copyOf(Fixtures("v1_naming_2.2"))
    val v = copy.resolve("_versions")
    Files.move(v.resolve("2.manifest"), v.resolve("3.manifest"))
    val ds = LanceDataset.open(io, copy.toString)
    val e = intercept[LanceCorruptFileException](ds.open(VersionSpec.Latest))
    assert(e.getMessage.contains("3.manifest"))
  }
}
