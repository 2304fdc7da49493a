package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.{LanceConcurrentModificationException, LanceUnsupportedException}
import io.sparklance.format._
import io.sparklance.format.writer._
import io.sparklance.storage.{HadoopFileIO, Paths}
import io.sparklance.proto.{RowIdProtos, TableProtos}
import io.sparklance.table._
import io.sparklance.table.commit.NewFragment
import io.sparklance.testutil.TinyDatasets

/**
 * The commit protocol against our own reader: versions, fragment ids, row ids, flags, the
 * index section, and Lance's conflict rules between concurrent writers. pylance's view of
 * the same commits is checked in tests/write (pytest).
 */
class CommitterSuite extends AnyFunSuite {
  private val io = HadoopFileIO.local()
  private val fields = TinyDatasets.fields

  private def newRoot(): String = TinyDatasets.newRoot()

  private def fragment(
      root: String,
      ids: Seq[Long],
      version: FileVersion = FileVersion.V2_2
  ): NewFragment =
    TinyDatasets.fragment(root, ids, version)

  private def create(
      root: String,
      frags: Seq[NewFragment],
      opts: CommitOptions = CommitOptions()
  ): CommitResult =
    new Committer(io, root, opts).commit(
      None,
      Overwrite(frags, fields, Map.empty, None, mustCreate = true)
    )

  private def latest(root: String): Snapshot = TinyDatasets.latest(io, root)

  private def ids(s: Snapshot): Seq[Long] = TinyDatasets.ids(io, s)

  test("create, append and overwrite make linear versions with the right fragments") {
    val root = newRoot()
    assert(create(root, Seq(fragment(root, 0L until 10L))).version == 1)
    val v1 = latest(root)
    assert(v1.manifest.getDataFormat.getVersion == "2.2")
    assert(v1.manifest.getWriterVersion.getLibrary == "spark-lance")
    assert(v1.manifest.getMaxFragmentId == 0)
    assert(v1.naming == ManifestNaming.V2)
    assert(new java.io.File(Paths.join(
      Paths.join(root, "_transactions"),
      v1.manifest.getTransactionFile
    )).exists())

    new Committer(io, root).commit(
      Some(v1),
      Append(Seq(fragment(root, 10L until 15L), fragment(root, 15L until 20L)))
    )
    val v2 = latest(root)
    assert(v2.version == 2)
    assert(v2.fragments.map(_.getId) == Seq(0L, 1L, 2L))
    assert(v2.manifest.getMaxFragmentId == 2)
    assert(ids(v2) == (0L until 20L))

    new Committer(io, root).commit(
      Some(v2),
      Overwrite(Seq(fragment(root, Seq(99L))), fields, Map.empty, None, mustCreate = false)
    )
    val v3 = latest(root)
    assert(ids(v3) == Seq(99L))
    assert(v3.fragments.map(_.getId) == Seq(3L)) // ids are never reused (pylance 14)
    assert(v3.manifest.getMaxFragmentId == 3)
    assert(ids(LanceDataset.open(io, root).open(VersionSpec.Number(2))) == (0L until 20L))
  }

  test("an append that lost the race is rebased onto the concurrent append") {
    val root = newRoot()
    create(root, Seq(fragment(root, 0L until 5L)))
    val base = latest(root)
    // Writer A commits version 2 while writer B still works from version 1.
    new Committer(io, root).commit(Some(base), Append(Seq(fragment(root, 5L until 7L))))
    val r = new Committer(io, root).commit(Some(base), Append(Seq(fragment(root, 7L until 9L))))
    assert(r.version == 3 && r.attempts == 2)
    val s = latest(root)
    assert(ids(s).sorted == (0L until 9L))
    assert(s.fragments.map(_.getId) == Seq(0L, 1L, 2L))
  }

  test("an append that lost the race to an overwrite fails with a concurrent-modification error") {
    val root = newRoot()
    create(root, Seq(fragment(root, 0L until 5L)))
    val base = latest(root)
    new Committer(io, root).commit(
      Some(base),
      Overwrite(Seq(fragment(root, Seq(42L))), fields, Map.empty, None, mustCreate = false)
    )
    val e = intercept[LanceConcurrentModificationException] {
      new Committer(io, root).commit(Some(base), Append(Seq(fragment(root, 5L until 7L))))
    }
    assert(e.getMessage.contains("the Overwrite replaced the data"), e.getMessage)
    assert(e.getMessage.contains("version 1"), e.getMessage)
    assert(latest(root).version == 2 && ids(latest(root)) == Seq(42L))
  }

  test("a create that finds a dataset created meanwhile fails; an overwrite replaces it") {
    val root = newRoot()
    create(root, Seq(fragment(root, Seq(1L))))
    intercept[LanceConcurrentModificationException](create(root, Seq(fragment(root, Seq(2L)))))
    val replace =
      Overwrite(Seq(fragment(root, Seq(3L))), fields, Map.empty, None, mustCreate = false)
    // Two overwrites racing: a retryable conflict, which re-running the overwrite resolves.
    assert(intercept[LanceConcurrentModificationException] {
      new Committer(io, root).commit(None, replace)
    }.retryable)
    new Committer(io, root).executeFrom(None)(_ => replace)
    assert(latest(root).version == 2 && ids(latest(root)) == Seq(3L))
  }

  test("stable row ids: sequences and next_row_id continue across appends") {
    val root = newRoot()
    create(root, Seq(fragment(root, 0L until 4L)), CommitOptions(enableStableRowIds = true))
    new Committer(io, root).commit(Some(latest(root)), Append(Seq(fragment(root, 4L until 10L))))
    val s = latest(root)
    assert(
      (s.readerFeatureFlags & FeatureFlags.StableRowIds) != 0 && (s.writerFeatureFlags & FeatureFlags.StableRowIds) != 0
    )
    assert(s.manifest.getNextRowId == 10)
    val seqs = s.fragments.map(f =>
      RowIdProtos.RowIdSequence.parseFrom(f.getInlineRowIds).getSegments(0).getRange
    )
    assert(seqs.map(r => (r.getStart, r.getEnd)) == Seq((0L, 4L), (4L, 10L)))
    val created =
      RowIdProtos.RowDatasetVersionSequence.parseFrom(s.fragments(1).getInlineCreatedAtVersions)
    assert(created.getRuns(0).getVersion == 2)
  }

  test(
    "the index section and unknown manifest fields are carried over on append, dropped on overwrite"
  ) {
    val root = newRoot()
    create(root, Seq(fragment(root, 0L until 3L)))
    // Give version 1 an index section and an unknown field, as a newer Lance would.
    val v1 = latest(root)
    val section = TableProtos.IndexSection.newBuilder().addIndices(
      TableProtos.IndexMetadata.newBuilder().setName("id_idx").addFields(0).setDatasetVersion(1)
    ).build().toByteArray
    val unknown = com.google.protobuf.UnknownFieldSet.newBuilder()
      .addField(
        99,
        com.google.protobuf.UnknownFieldSet.Field.newBuilder().addVarint(7).build()
      ).build()
    val patched = v1.manifest.toBuilder.setUnknownFields(unknown)
    val bytes = ManifestFile.encode(patched, Some(section))
    io.write(v1.manifestPath, bytes)
    val v1b = latest(root)
    new Committer(io, root).commit(Some(v1b), Append(Seq(fragment(root, Seq(3L)))))
    val v2 = latest(root)
    assert(v2.manifest.hasIndexSection)
    val carried = TableProtos.IndexSection.parseFrom(ManifestFile.readSection(
      io,
      v2.manifestPath,
      v2.manifest.getIndexSection
    ))
    assert(carried.getIndicesList.asScala.map(_.getName) == Seq("id_idx"))
    assert(v2.manifest.getUnknownFields.hasField(99))
    new Committer(io, root).commit(
      Some(v2),
      Overwrite(Seq(fragment(root, Seq(9L))), fields, Map.empty, None, mustCreate = false)
    )
    assert(!latest(root).manifest.hasIndexSection)
  }

  test("unknown writer feature flags are refused before anything is written") {
    val root = newRoot()
    create(root, Seq(fragment(root, Seq(1L))))
    val v1 = latest(root)
    val patched = v1.manifest.toBuilder.setWriterFeatureFlags(1L << 40)
    io.write(v1.manifestPath, ManifestFile.encode(patched, None))
    val e = intercept[LanceUnsupportedException] {
      new Committer(io, root).commit(Some(latest(root)), Append(Nil))
    }
    assert(e.getMessage.contains("writer"))
    assert(latest(root).version == 1)
  }

  test("appending files of another version marks the dataset as mixed-version") {
    val root = newRoot()
    create(root, Seq(fragment(root, Seq(1L), FileVersion.V2_1)))
    new Committer(io, root).commit(
      Some(latest(root)),
      Append(Seq(fragment(root, Seq(2L), FileVersion.V2_2)))
    )
    val s = latest(root)
    assert((s.readerFeatureFlags & FeatureFlags.MixedDataFileVersions) != 0)
    assert(ids(s) == Seq(1L, 2L))
  }
}
