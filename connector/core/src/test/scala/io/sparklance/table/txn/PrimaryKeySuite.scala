package io.sparklance.table.txn

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import io.sparklance.LanceSchemaMismatchException
import io.sparklance.table.{PrimaryKey, Snapshot}
import io.sparklance.testutil.RowFiles

/**
 * The unenforced primary key (pylance 14, `pk_ops.py`): the keys a merge inserts, recorded
 * byte for byte as pylance's merge_insert records them; the key set as pylance sets it;
 * and merges that insert keys conflicting, or not, exactly where pylance's do, whichever
 * of the two commits first.
 */
class PrimaryKeySuite extends TwinDatasetSuite {
  override protected val module = "pk_ops"

  private def keyed(
      key: Seq[String],
      version: String = "2.2",
      stable: Boolean = false
  ): (Path, Path) = {
    val dir = io.sparklance.testutil.TempDirs.create("lance-pk-")
    val ours = dir.resolve("ours")
    pylance("make", ours, version, stable, jlist(key: _*))
    (ours, io.sparklance.testutil.TempDirs.copyTree(ours, dir.resolve("theirs")))
  }

  private def lastFilter(p: Path): KeyExistenceFilter =
    new TransactionLog(fileIO, p.toString).of(latest(p)).insertedKeys.getOrElse(
      fail(s"version ${latest(p).version} of $p records no inserted keys")
    )

  /** Key bytes of the pk_ops rows: id (int64), k (string "k<id>"), m (int32, id * 3). */
  private def keyOf(columns: Seq[String], id: Long): Array[Byte] = {
    val parts = columns.map {
      case "id" => KeyBloom.Key.long(id)
      case "k" => KeyBloom.Key.string(s"k$id")
      case "m" => KeyBloom.Key.long(id * 3)
    }
    if (parts.size == 1) parts.head else KeyBloom.Key.composite(parts)
  }

  private def ids(s: Snapshot, columns: Seq[String]) =
    columns.map(c => s.schema.fields.find(_.name == c).get.id)

  for (key <- Seq(Seq("id"), Seq("k"), Seq("m"), Seq("id", "k"))) {
    test(s"inserted keys on ${key.mkString("+")} are recorded as pylance's merge_insert " +
      "records them") {
      val (p, _) = keyed(key)
      // 38 and 39 exist (updated, not recorded); 100-104 and 7000 are inserted.
      assert(pylance(
        "upsert",
        p,
        jlist(key: _*),
        jlist(key: _*),
        jlist(Seq(38L, 39L, 100L, 101L, 102L, 103L, 104L, 7000L).map(Long.box): _*),
        1
      )
        .asText == "ok")
      val theirs = lastFilter(p)
      val bloom = new KeyBloom()
      Seq(100L, 101L, 102L, 103L, 104L, 7000L).foreach(i => bloom.add(keyOf(key, i)))
      assert(theirs == bloom.toFilter(ids(latest(p), key)))
      assert(theirs.mayIntersect(bloom.toFilter(ids(latest(p), key))))
    }
  }

  test("the key is set as pylance's update_field_metadata sets it, and only once") {
    val (ours, theirs) = twins()
    commit(ours, s => PrimaryKey.install(s, Seq(Seq("id"))))
    pylance("set_key", theirs, jlist("id"))
    assertTwins(ours, theirs)
    assert(PrimaryKey.paths(latest(ours).schema) == Seq("id"))
    val again = intercept[LanceSchemaMismatchException](
      commit(ours, s => PrimaryKey.install(s, Seq(Seq("id"))))
    )
    assert(again.getMessage.contains("cannot change"))
    // Nor through another field metadata update.
    val other = intercept[LanceSchemaMismatchException](commit(
      ours,
      s =>
        UpdateConfig(
          fieldMetadata = Map(s.schema.fields.find(_.name == "n").get.id ->
            UpdateMap.set(Map(PrimaryKey.Marker -> "true")))
        )
    ))
    assert(other.getMessage.contains("cannot change"))
  }

  test("a key on nullable, nested, missing or non-key-type columns is refused, naming it") {
    // table_ops' table: (id int64 not null, n int64, v string, s struct<a int32, b string>).
    val ours = io.sparklance.testutil.TempDirs.create("lance-pk-").resolve("t")
    io.sparklance.testutil.Pylance.call("table_ops", "make", ours.toString, "2.2", false)
    def refused(path: Seq[String], words: String*) = {
      val e = intercept[LanceSchemaMismatchException](
        commit(ours, s => PrimaryKey.install(s, Seq(path)))
      )
      words.foreach(w => assert(e.getMessage.contains(w), e.getMessage))
    }
    refused(Seq("n"), "'n' is nullable")
    refused(Seq("s", "a"), "'s.a' is nested")
    refused(Seq("s"), "'s' is a struct")
    refused(Seq("nope"), "'nope'", "no such column")
    assert(PrimaryKey.of(latest(ours).schema).isEmpty)
  }

  /** Our merge on a keyed table: ids upserted (inserted here: none exist), keys recorded. */
  private def ourUpsert(s: Snapshot, key: Seq[String], insertIds: Seq[Long]): Update = {
    val rows = insertIds.map(i => RowFiles.row(i, 1) ++ Map("k" -> s"k$i", "m" -> i * 3))
    val bloom = new KeyBloom()
    insertIds.foreach(i => bloom.add(keyOf(key, i)))
    Update(
      Map.empty,
      Seq(NewRows(RowFiles.fragment(s, rows))),
      s.schema.fields.map(_.id),
      insertedKeys = Some(bloom.toFilter(ids(s, key)))
    )
  }

  /** What pylance commits before our merge inserting key 500, read at the version before. */
  private val cases: Seq[(String, Path => Any)] = Seq(
    "pylance inserts the same key" -> (p =>
      pylance("upsert", p, jlist("id"), "id", jlist(Long.box(500L)), 2)
    ),
    "pylance inserts another key" -> (p =>
      pylance("upsert", p, jlist("id"), "id", jlist(Long.box(501L)), 2)
    ),
    "pylance appends" -> (p => pylance("append", p, jlist("id"), jlist(Long.box(900L)))),
    "pylance updates without a key" -> (p => pylance("update", p, "id = 4")),
    "pylance deletes" -> (p => pylance("delete", p, "id = 4"))
  )

  for ((what, theirs) <- cases) {
    test(s"$what, then our merge inserting key 500 from the older version: as pylance's own") {
      val (p, twin) = keyed(Seq("id"))
      val read = latest(p)
      Seq(p, twin).foreach(theirs)
      // pylance's own merge from the same version, without re-runs: its resolver's decision.
      val want = pylance(
        "upsert",
        twin,
        jlist("id"),
        "id",
        jlist(Long.box(500L)),
        1,
        Long.box(read.version),
        0
      ).asText
      assert(outcome(p, read, ourUpsert(read, Seq("id"), Seq(500L))) == want)
      if (want == "ok") assertSameJson("after both", describe(p), describe(twin))
    }
  }

  test("our merge inserting key 500, then pylance's from the older version re-runs as an " +
    "update (one row 500) or commits beside it (another key)") {
    for ((other, rows) <- Seq((500L, 1), (501L, 2))) {
      val (p, _) = keyed(Seq("id"))
      val read = latest(p).version
      commit(p, s => ourUpsert(s, Seq("id"), Seq(500L)))
      // Without re-runs pylance reports what its resolver decided about our transaction.
      val once =
        pylance("upsert", p, jlist("id"), "id", jlist(Long.box(other)), 2, Long.box(read), 0).asText
      assert(once == (if (other == 500L) "retryable" else "ok"), s"key $other")
      if (other == 500L)
        assert(pylance(
          "upsert",
          p,
          jlist("id"),
          "id",
          jlist(Long.box(other)),
          2,
          Long.box(read)
        ).asText == "ok")
      val got = pylance("table", p).elements().asScala.toSeq
      assert(got.count(r => r.get("id").asLong >= 500) == rows, s"key $other")
      assert(got.count(r => r.get("id").asLong == 500) == 1)
    }
  }
}
