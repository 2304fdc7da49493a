package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.proto.TableProtos.DataFragment
import io.sparklance.proto.TransactionProtos.Transaction

/**
 * The conflict rules per pair (ours, committed), from pylance's `conflict_resolver.rs` for
 * the operations implemented here; the pylance-observed pairs live in DeleteSuite.
 */
class ConflictResolverSuite extends AnyFunSuite {
  private val resolver = new ConflictResolver("/tmp/ds")

  private def txn(f: Transaction.Builder => Unit): Option[Transaction] = {
    val b = Transaction.newBuilder().setReadVersion(1).setUuid("u")
    f(b)
    Some(b.build())
  }

  private def frag(id: Long) = DataFragment.newBuilder().setId(id).build()

  private val append = txn(_.setAppend(Transaction.Append.newBuilder()))
  private val overwrite = txn(_.setOverwrite(Transaction.Overwrite.newBuilder()))
  private val restore = txn(_.setRestore(Transaction.Restore.newBuilder().setVersion(1)))
  private val merge = txn(_.setMerge(Transaction.Merge.newBuilder()))
  private val index = txn(_.setCreateIndex(Transaction.CreateIndex.newBuilder()))
  private def delete(ids: Long*) = txn(_.setDelete(Transaction.Delete.newBuilder()
    .addAllUpdatedFragments(ids.map(frag).asJava)))
  private def deleteWhole(ids: Long*) = txn(_.setDelete(Transaction.Delete.newBuilder()
    .addAllDeletedFragmentIds(ids.map(Long.box).asJava)))
  private def rewrite(ids: Long*) = txn(_.setRewrite(Transaction.Rewrite.newBuilder()
    .addGroups(Transaction.Rewrite.RewriteGroup.newBuilder()
      .addAllOldFragments(ids.map(frag).asJava))))
  private def updateColumns(ids: Long*) = txn(_.setUpdate(Transaction.Update.newBuilder()
    .addAllUpdatedFragments(ids.map(frag).asJava).addFieldsModified(1)))
  private def updateMoving(removed: Long*) = txn(_.setUpdate(Transaction.Update.newBuilder()
    .addAllRemovedFragmentIds(removed.map(Long.box).asJava)))
  private def replace(id: Long) = txn(_.setDataReplacement(Transaction.DataReplacement.newBuilder()
    .addReplacements(Transaction.DataReplacementGroup.newBuilder().setFragmentId(id))))

  private val ourAppend = Append(Nil)
  private val ourDelete = Delete(Map(0L -> RoaringBitmap.bitmapOf(3)))

  private def passes(op: Operation, committed: Option[Transaction]*): Unit =
    resolver.check(
      op,
      1,
      committed.zipWithIndex.map { case (t, i) => CommittedTransaction(2 + i, t) }
    )

  private def fails(op: Operation, committed: Option[Transaction]): String =
    intercept[LanceConcurrentModificationException](passes(op, committed)).getMessage

  test("an append rebases over appends, deletes, rewrites, merges and indices") {
    passes(ourAppend, append, delete(0), rewrite(0), merge, index, deleteWhole(0))
  }

  test("an append fails after an overwrite or restore, naming both operations and versions") {
    for ((t, name) <- Seq(overwrite -> "Overwrite", restore -> "Restore")) {
      val m = fails(ourAppend, t)
      assert(m.contains(s"this Append conflicts with the $name committed at version 2"), m)
      assert(m.contains("started from version 1") && m.contains("incompatible transaction"), m)
    }
  }

  test("a missing transaction or an unknown operation conflicts, whatever ours is") {
    for (op <- Seq(ourAppend, ourDelete)) {
      assert(fails(op, None).contains("records no transaction"))
      assert(fails(op, txn(_ => ())).contains("does not know"))
    }
  }

  test("a delete rebases over appends, indices and deletes of the same or other fragments") {
    passes(ourDelete, append, index, delete(0), delete(1), deleteWhole(0), rewrite(1), replace(1))
  }

  test("a delete fails after an overwrite or restore (incompatible) and a merge (retryable)") {
    assert(fails(ourDelete, overwrite)
      .contains("this Delete conflicts with the Overwrite committed at version 2"))
    assert(fails(ourDelete, restore).contains("incompatible transaction"))
    assert(fails(ourDelete, merge).contains("retryable conflict"))
  }

  test("a delete fails when its fragment was rewritten, replaced, or its rows moved or rewritten") {
    for (t <- Seq(rewrite(0, 1), replace(0), updateColumns(0), updateMoving(0))) {
      val m = fails(ourDelete, t)
      assert(m.contains("retryable conflict") && m.contains("fragment(s) 0"), m)
    }
    passes(ourDelete, updateColumns(1), updateMoving(1))
  }

  test("an overwrite rebases over data changes, not another overwrite; a create fails") {
    val ow = Overwrite(Nil, Nil, Map.empty, None, mustCreate = false)
    passes(ow, append, delete(0), restore, merge)
    val again = fails(ow, overwrite)
    assert(again.contains("retryable conflict") && again.contains("replaced the dataset"), again)
    val m = fails(ow.copy(mustCreate = true), overwrite)
    assert(m.contains("created the dataset") && m.contains("this Overwrite conflicts"), m)
  }
}
