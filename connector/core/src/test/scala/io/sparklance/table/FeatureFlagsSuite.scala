package io.sparklance.table

import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceUnsupportedException
import io.sparklance.storage.HadoopFileIO
import io.sparklance.testutil.{Fixtures, TempDirs}

class FeatureFlagsSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()

  /** A copy of a fixture whose latest manifest has its reader flags replaced. */
  private def withReaderFlags(flags: Long): (LanceDataset, Long) = {
    val copy = TempDirs.copyOf(Fixtures("deletions_arrow_2.2"))
    val ds = LanceDataset.open(io, copy.toString)
    val latest = ds.versionLog.latest().get
    val m = ManifestFile.read(io, latest.path).manifest
    Files.write(
      java.nio.file.Paths.get(new java.net.URI(latest.path).getPath),
      ManifestFile.encode(m.toBuilder.setReaderFeatureFlags(flags).build())
    )
    (ds, latest.version)
  }

  test("flags the reader knows open") {
    Seq(0L, 1L, 3L, 1L | 2L | 4L | 8L | 16L | 32L | 128L | 256L | 1024L | 16384L).foreach { flags =>
      val (ds, v) = withReaderFlags(flags)
      assert(ds.open(VersionSpec.Latest).version == v)
    }
  }

  test("unknown and unsupported flags are refused, naming the flag") {
    Seq(
      64L -> "data overlays",
      512L -> "fragment reuse index",
      2048L -> "spilled row lineage",
      4096L -> "fragment tree",
      (1L << 18) -> s"flag ${1L << 18}",
      (1L << 40) -> s"flag ${1L << 40}"
    ).foreach { case (flag, words) =>
      val (ds, _) = withReaderFlags(1L | flag)
      val e = intercept[LanceUnsupportedException](ds.open(VersionSpec.Latest))
      assert(e.getMessage.contains(words), e.getMessage)
      assert(e.getMessage.contains(ds.root))
    }
  }

  test("fixtures written by pylance use only flags we read") {
    Fixtures.all.foreach { f =>
      val ds = LanceDataset.open(io, f.path.toString)
      ds.versions().foreach(v => ds.open(VersionSpec.Number(v.version)))
    }
  }
}
