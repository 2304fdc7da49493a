package io.sparklance.table

import java.nio.file.{Files, Path}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.storage.HadoopFileIO
import io.sparklance.testutil.{Fixtures, TempDirs}

/** The dataset layout: where files go, whether a dataset is there, a failed write's cleanup. */
class DatasetLayoutSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()

  private def names(dir: Path): Set[String] =
    if (!Files.isDirectory(dir)) Set.empty
    else Files.list(dir).iterator().asScala.map(_.getFileName.toString).toSet

  test("the directories of a pylance dataset are where the layout says") {
    val root = Fixtures("multifrag_2.2").path.toString
    val s = LanceDataset.open(io, root).open(VersionSpec.Latest)
    val data = names(Path.of(DatasetLayout.dataDir(root)))
    for (f <- s.fragments; d <- f.getFilesList.asScala)
      assert(data(d.getPath), s"${d.getPath} not in ${DatasetLayout.dataDir(root)}")
    assert(names(Path.of(DatasetLayout.versionsDir(root))).exists(_.endsWith(".manifest")))
    assert(DatasetLayout.hasDataset(io, root) && DatasetLayout.hasDataset(io, root + "/"))
  }

  test("no dataset: a missing path, an empty directory, _versions/ without a manifest") {
    val dir = TempDirs.create("layout-")
    assert(!DatasetLayout.hasDataset(io, dir.resolve("missing").toString))
    assert(!DatasetLayout.hasDataset(io, dir.toString))
    Files.createDirectories(dir.resolve("_versions"))
    Files.write(dir.resolve("_versions").resolve(".tmp-1.manifest"), Array[Byte](1))
    Files.write(dir.resolve("_versions").resolve("notes.txt"), Array[Byte](1))
    assert(!DatasetLayout.hasDataset(io, dir.toString))
  }

  test("a write's uncommitted data file goes with its blob sidecars and blob objects") {
    val root = TempDirs.create("layout-")
    val data = root.resolve("data")
    Files.createDirectories(data.resolve("abc").resolve("x"))
    Files.write(data.resolve("abc.lance"), Array[Byte](1))
    Files.write(data.resolve("abc").resolve("1.blob"), Array[Byte](1))
    Files.write(data.resolve("keep.lance"), Array[Byte](1))
    Files.createDirectories(root.resolve("_blobs"))
    Files.write(root.resolve("_blobs").resolve("m1.blob"), Array[Byte](1))
    Files.write(root.resolve("_blobs").resolve("m2.blob"), Array[Byte](1))
    DatasetLayout.deleteUncommitted(io, root.toString, "abc.lance", Seq("_blobs/m1.blob"))
    assert(names(data) == Set("keep.lance"))
    assert(names(root.resolve("_blobs")) == Set("m2.blob"))
    // Nothing there: nothing thrown.
    DatasetLayout.deleteUncommitted(io, root.toString, "gone.lance", Seq("_blobs/gone.blob"))
  }

  test("an s3+ddb URI's query is its settings; other paths are their own root") {
    assert(
      DatasetLayout.splitQuery("s3+ddb://b/p/t.lance?ddbTableName=my%20table&x") ==
        (("s3+ddb://b/p/t.lance", Map("ddbTableName" -> "my table", "x" -> "")))
    )
    assert(DatasetLayout.splitQuery("S3+DDB://b/t?ddbTableName=t")._2 == Map("ddbTableName" -> "t"))
    assert(DatasetLayout.splitQuery("s3+ddb://b/t") == ((
      "s3+ddb://b/t",
      Map.empty[String, String]
    )))
    assert(DatasetLayout.splitQuery("s3://b/t?x=1") == ((
      "s3://b/t?x=1",
      Map.empty[String, String]
    )))
    assert(DatasetLayout.splitQuery("/tmp/a?b") == (("/tmp/a?b", Map.empty[String, String])))
  }
}
