package io.sparklance.table.txn

import org.scalatest.funsuite.AnyFunSuite

import io.sparklance.testutil.{Pylance, TempDirs}

/**
 * Our column-rewriting Update against pylance's own (`LanceFragment.update_columns`, then an
 * Update in rewrite_columns mode; `txn_matrix.py`) on twin datasets: the same files per
 * fragment (tombstoned fields, the new file; an earlier update's file dropped), rows with
 * their row ids and created/last-updated versions, indices on the updated column no longer
 * covering the fragment; pylance validates both and keeps going alike. Its conflicts are
 * TransactionMatrixSuite's "update_columns" row and column.
 */
class ColumnUpdateSuite extends AnyFunSuite {
  import TxnMatrix.{assertSame, describe, fileIO, latest}

  for (stable <- Seq(false, true)) {
    test(s"two column updates of n, with indices on n and id, as pylance's (stable: $stable)") {
      Pylance.require()
      val dir = TempDirs.create("lance-colupd-")
      val ours = dir.resolve("ours")
      Pylance.call("txn_matrix", "make", ours.toString, "2.2", stable)
      Pylance.call("table_ops", "create_index", ours.toString, "n", "n_idx")
      Pylance.call("table_ops", "create_index", ours.toString, "id", "id_idx")
      Pylance.call("txn_matrix", "delete", ours.toString, "id = 7")
      val theirs = TempDirs.copyTree(ours, dir.resolve("theirs"))
      for (pred <- Seq("id = 4", "id = 3 OR id = 4")) {
        val s = latest(ours)
        new Committer(fileIO, ours.toString).commit(Some(s), OurOps.updateColumns(s, pred, 1))
        Pylance.call("txn_matrix", "update_columns", theirs.toString, pred)
        assertSame(s"after n = n + 1 where $pred", describe(ours), describe(theirs))
      }
      assert(latest(ours).fragments.head.getFilesCount == 2)
      assertSame(
        "after pylance keeps going",
        Pylance.call("txn_matrix", "keep_going", ours.toString),
        Pylance.call("txn_matrix", "keep_going", theirs.toString)
      )
    }
  }
}
