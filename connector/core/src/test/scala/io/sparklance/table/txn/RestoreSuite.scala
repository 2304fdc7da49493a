package io.sparklance.table.txn

/**
 * Our Restore against pylance's `ds.restore()` of the same version: fragments, deletion
 * files, schema, config and indices of the old version; ids that must not go backwards
 * (fragment ids, stable row ids) kept from the newest version.
 */
class RestoreSuite extends TwinDatasetSuite {
  for (stable <- Seq(false, true); version <- Seq(1L, 2L, 3L)) {
    test(s"restoring version $version (stable row ids: $stable) as pylance restores it") {
      val (ours, theirs) = twins(stable)
      Seq(ours, theirs).foreach { p =>
        pylance("drop_columns", p, jlist("n"))
        pylance("update_config", p, java.util.Map.of("k", "v"), jlist())
      }
      commit(ours, _ => Restore(version))
      pylance("restore", theirs, version)
      assertTwins(ours, theirs)
    }
  }

  test("a restore brings back the indices of the restored version, not of the newest") {
    val (ours, theirs) = twins()
    Seq(ours, theirs).foreach { p =>
      pylance("index", p) // versions 4 and 5
      pylance("drop_columns", p, jlist("n")) // the index on n goes
    }
    commit(ours, _ => Restore(5))
    pylance("restore", theirs, 5L)
    assertTwins(ours, theirs)
    assert(describe(ours).get("indices").size() == 2)
  }

  test("a restore lands on top of a concurrent schema change, as pylance's") {
    val (ours, theirs) = twins()
    val read = latest(ours)
    Seq(ours, theirs).foreach(p => pylance("drop_columns", p, jlist("v")))
    assert(outcome(ours, read, Restore(2)) == "ok")
    pylance("stale_restore", theirs, 2L, read.version)
    assertTwins(ours, theirs)
  }

  test("restoring a version that does not exist names it") {
    val (ours, _) = twins()
    val e = intercept[io.sparklance.LanceNotFoundException](commit(ours, _ => Restore(9)))
    assert(e.getMessage.contains("9"))
  }
}
