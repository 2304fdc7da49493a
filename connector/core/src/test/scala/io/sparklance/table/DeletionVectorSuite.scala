package io.sparklance.table

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.{Fixtures, RecordingFileIO, TempDirs}

/**
 * [[DeletionVector.readShared]]: a fragment's deleted rows are read once per JVM for scans,
 * the same rows [[DeletionVector.read]] gives and pylance recorded, and never the object a
 * caller of `read` changes.
 */
class DeletionVectorSuite extends AnyFunSuite {
  for (kind <- Seq("arrow", "bitmap"); fmt <- Seq("2.0", "2.2")) {
    test(s"deletions_${kind}_$fmt: a deletion file is read once for scans") {
      val root = TempDirs.copyOf(Fixtures(s"deletions_${kind}_$fmt")).toString
      val rec = new RecordingFileIO()
      val snap = LanceDataset.open(rec, root).open(VersionSpec.Latest)
      val frags = snap.fragments.map(FragmentRef(snap.root, snap, _))
        .filter(_.deletionPath.isDefined)
      assert(frags.nonEmpty)
      frags.foreach { f =>
        rec.clear()
        val first = DeletionVector.readShared(rec, f)
        assert(rec.wholeReads.asScala.toVector == f.deletionPath.toVector)
        // pylance recorded how many rows the file deletes.
        assert(first.cardinality == f.numDeletedRows && f.numDeletedRows > 0)
        rec.clear()
        val again = DeletionVector.readShared(rec, f)
        assert((again eq first) && rec.wholeReads.isEmpty && rec.rangedReads.isEmpty)
        val own = DeletionVector.read(rec, f)
        assert(own.deleted == first.deleted && !(own.deleted eq first.deleted))
        own.deleted.add(f.physicalRows.toInt - 1)
        own.deleted.remove(first.deleted.first())
        assert(DeletionVector.readShared(rec, f).cardinality == f.numDeletedRows)
      }
    }
  }
}
