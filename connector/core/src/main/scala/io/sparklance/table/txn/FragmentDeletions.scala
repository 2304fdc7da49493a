package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap

import io.sparklance.LanceErrors
import io.sparklance.proto.TableProtos
import io.sparklance.table.{DeletionVector, FragmentRef}

/**
 * Marks rows of existing fragments deleted, for Delete and Update: per fragment id, the row
 * offsets to delete are merged with the fragment's current deletion vector and the union is
 * written as a new deletion file named with the base version (pylance names them so), or the
 * fragment is dropped from the manifest when every row is now deleted.
 * The result is what changed: fragments with new deletion files (`updated`) and the ids of
 * fragments gone (`removed`), as Delete and Update transactions record them.
 */
final case class FragmentDeletions(
    updated: Seq[TableProtos.DataFragment],
    removed: Seq[Long]
)

object FragmentDeletions {

  /**
   * Applies `rows` to the next manifest `m` (fragments of its base). `overlap` is what to do
   * when a concurrent transaction (committed after the read version) already deleted some of
   * the rows: a Delete keeps them deleted, which is what pylance's re-run of the predicate
   * gives; an Update must not (it would re-insert a stale copy of a row another writer moved),
   * so it fails with a retryable conflict, as pylance's rebase does ("both modified rows").
   */
  def apply(
      m: ManifestBuilder,
      rows: Map[Long, RoaringBitmap],
      op: String,
      failOnOverlap: Boolean
  ): FragmentDeletions = {
    val base = m.base.getOrElse(
      throw LanceErrors.unsupported(s"Cannot $op rows of ${m.root}: no dataset there")
    )
    val live = base.fragments.map(_.getId).toSet
    val missing = rows.keySet.filter(id => !rows(id).isEmpty && !live.contains(id))
    if (missing.nonEmpty && base.version == m.readVersion)
      throw LanceErrors.invalidOption(
        "rows",
        missing.toSeq.sorted.mkString(", "),
        s"no such fragment(s) in version ${base.version} of ${m.root}"
      )
    if (missing.nonEmpty && failOnOverlap)
      throw conflict(m, op, s"fragment(s) ${missing.toSeq.sorted.mkString(", ")} were removed")
    val upd = Seq.newBuilder[TableProtos.DataFragment]
    val gone = Seq.newBuilder[Long]
    val kept = base.fragments.flatMap { f =>
      rows.get(f.getId).filterNot(_.isEmpty) match {
        case None => Some(f)
        case Some(ours) =>
          val ref = FragmentRef(m.root, base, f)
          if ((ours.last() & 0xffffffffL) >= f.getPhysicalRows)
            throw LanceErrors.invalidOption(
              "rows",
              (ours.last() & 0xffffffffL).toString,
              s"fragment ${f.getId} of ${m.root} has ${f.getPhysicalRows} rows"
            )
          val existing = DeletionVector.read(m.fileIO, ref).deleted
          if (failOnOverlap && RoaringBitmap.intersects(existing, ours))
            throw conflict(m, op, s"rows of fragment ${f.getId} it changes were deleted or moved")
          val all = RoaringBitmap.or(existing, ours)
          // Rows a concurrent delete already removed: nothing to write, as pylance's re-run finds.
          if (all.getLongCardinality == existing.getLongCardinality) Some(f)
          else if (all.getLongCardinality >= f.getPhysicalRows) { gone += f.getId; None }
          else {
            val concurrent = base.version > m.readVersion && f.hasDeletionFile &&
              f.getDeletionFile.getReadVersion >= m.readVersion
            val file =
              DeletionFileWriter.write(m.fileIO, m.root, f.getId, base.version, all, concurrent)
            val nf = f.toBuilder.setDeletionFile(file).build()
            upd += nf
            Some(nf)
          }
      }
    }
    m.manifest.clearFragments().addAllFragments(kept.asJava)
    FragmentDeletions(upd.result(), gone.result())
  }

  private def conflict(m: ManifestBuilder, op: String, why: String) =
    LanceErrors.concurrentModification(
      m.root,
      m.readVersion,
      s"this $op conflicts with a transaction committed before version ${m.version} " +
        s"(retryable conflict: $why since version ${m.readVersion})",
      retryable = true
    )
}
