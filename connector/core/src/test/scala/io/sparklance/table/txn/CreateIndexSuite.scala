package io.sparklance.table.txn

import java.nio.file.Path

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.JsonNode

import io.sparklance.LanceConcurrentModificationException
import io.sparklance.format.{ColumnArray, FixedWidthArray, VarBinaryArray}
import io.sparklance.table.Snapshot
import io.sparklance.table.index.ScalarIndexes

/**
 * Our CreateIndex (a BTREE index built by BTreeIndexWriter from the rows pylance reads, then
 * committed) against pylance's `create_scalar_index(column, "BTREE")` and `drop_index` on
 * twins: the same index files (values, ids, page lookup), the same index section, queries
 * answered alike through the index, pylance going on alike; and its conflicts against
 * pylance's for the same pairs.
 */
class CreateIndexSuite extends TwinDatasetSuite {

  /** Our BTREE index of `column`, read at `read`, fed the rows pylance reads there. */
  private def ourIndex(
      p: Path,
      column: String,
      name: String,
      read: Snapshot => Snapshot = identity
  ): Unit = {
    val s = read(latest(p))
    ScalarIndexes.createBTree(fileIO, s, column, Some(name), replace = true) { w =>
      val rows = pylance("btree_rows", p, column, Long.box(s.version))
      val ids = rows.get("ids").elements().asScala.map(_.asLong()).toArray
      w.add(array(rows.get("values")), ids)
    }
  }

  private def array(values: JsonNode): ColumnArray = {
    val vs = values.elements().asScala.toIndexedSeq
    val nulls = vs.map(_.isNull).toArray
    val nullsOrNone = if (nulls.exists(identity)) nulls else null
    if (vs.forall(v => v.isNull || v.isNumber)) {
      val b = java.nio.ByteBuffer.allocate(vs.size * 8).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      vs.foreach(v => b.putLong(if (v.isNull) 0L else v.asLong()))
      new FixedWidthArray(vs.size, nullsOrNone, 8, b.array())
    } else {
      val bytes = vs.map(v => if (v.isNull) Array.emptyByteArray else v.asText().getBytes("UTF-8"))
      val offsets = bytes.scanLeft(0)(_ + _.length).toArray
      new VarBinaryArray(vs.size, nullsOrNone, offsets, bytes.flatten.toArray)
    }
  }

  private def indexDirs(p: Path): Int = {
    val dir = p.resolve("_indices").toString
    if (fileIO.isDirectory(dir)) fileIO.list(dir).size else 0
  }

  for (stable <- Seq(false, true); column <- Seq("id", "n", "v")) {
    test(s"a BTREE index of $column (stable row ids: $stable) as pylance's create_scalar_index") {
      val (ours, theirs) = twins(stable)
      ourIndex(ours, column, s"${column}_idx")
      pylance("create_index", theirs, column, s"${column}_idx")
      val o = pylance("index_files", ours, s"${column}_idx")
      val t = pylance("index_files", theirs, s"${column}_idx")
      assert(o == t)
      assertTwins(ours, theirs)
      val pred = column match { case "v" => "v >= 'r2'"; case c => s"$c < 17" }
      val answered = pylance("indexed", ours, pred)
      assert(answered.get("indexed") == answered.get("flat"))
    }
  }

  test("replacing and dropping an index, as pylance's create_scalar_index and drop_index") {
    val (ours, theirs) = twins()
    ourIndex(ours, "n", "n_idx")
    pylance("create_index", theirs, "n", "n_idx")
    pylance("delete", ours, "id = 5")
    pylance("delete", theirs, "id = 5")
    ourIndex(ours, "n", "n_idx")
    pylance("create_index", theirs, "n", "n_idx")
    assert(ScalarIndexes.list(fileIO, latest(ours)).map(_.getName) == Seq("n_idx"))
    assertTwins(ours, theirs)
    ScalarIndexes.drop(fileIO, latest(ours), "n_idx")
    pylance("drop_index", theirs, "n_idx")
    assertTwins(ours, theirs)
    val e = intercept[io.sparklance.LanceNotFoundException] {
      ScalarIndexes.drop(fileIO, latest(ours), "n_idx")
    }
    assert(e.getMessage.contains("n_idx"))
  }

  test("an index of the same name is refused unless replaced") {
    val (ours, _) = twins()
    ourIndex(ours, "n", "n_idx")
    val e = intercept[io.sparklance.LanceException] {
      ScalarIndexes.createBTree(fileIO, latest(ours), "n", Some("n_idx"), replace = false)(_ =>
        ()
      )
    }
    assert(e.getMessage.contains("n_idx"))
    assert(indexDirs(ours) == 1, "the refused index left no files")
  }

  test("columns a BTREE index is not built on are refused by name") {
    val (ours, _) = twins()
    val e = intercept[io.sparklance.LanceUnsupportedException] {
      ScalarIndexes.indexableField(latest(ours), "s")
    }
    assert(e.getMessage.contains("s"))
  }

  // pylance commits first (from the version we read); then our CreateIndex read before it
  // commits. pylance alone (a handle at the read version creating the same index) decides.
  private val pairs: Seq[(String, Path => Unit)] = Seq(
    ("an append", p => pylance("appends", p, Int.box(1), Int.box(5))),
    ("a delete", p => pylance("delete", p, "id = 7")),
    ("an index of another column", p => pylance("create_index", p, "id", "id_idx")),
    ("an index of the same name", p => pylance("create_index", p, "id", "n_idx")),
    ("a compaction", p => pylance("compact", p, java.util.Map.of())),
    ("a restore", p => pylance("restore", p, Long.box(1L)))
  )

  for ((what, theirOp) <- pairs) {
    test(s"pylance commits $what, then our CreateIndex from the same version") {
      val (ours, theirs) = twins()
      val read = latest(ours)
      Seq(ours, theirs).foreach(theirOp)
      val dirsBefore = indexDirs(ours)
      val got =
        try { ourIndex(ours, "n", "n_idx", _ => read); "ok" }
        catch {
          case e: LanceConcurrentModificationException =>
            if (e.retryable) "retryable" else "incompatible"
        }
      val want =
        pylance("stale_create_index", theirs, Long.box(read.version), "n", "n_idx").asText()
      assert(got == want)
      if (want == "ok") assertTwins(ours, theirs)
      else assert(indexDirs(ours) == dirsBefore, "a failed index leaves no files")
    }
  }
}
