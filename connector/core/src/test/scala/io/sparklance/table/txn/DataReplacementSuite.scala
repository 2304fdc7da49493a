package io.sparklance.table.txn

import scala.jdk.CollectionConverters._

import io.sparklance.LanceUnsupportedException
import io.sparklance.format.{FixedWidthArray, LanceField}
import io.sparklance.format.codec.LittleEndian
import io.sparklance.format.writer.{FileVersion, LanceFileWriter}
import io.sparklance.proto.TableProtos
import io.sparklance.storage.{Paths, StreamSink}
import io.sparklance.table.Snapshot
import io.sparklance.table.commit.{DataFileNames, NewDataFile}

/**
 * Our DataReplacement on pylance datasets (`table_ops.py`): an all-null column pylance added
 * gets values (Lance's null column population), then new values replace those files; pylance
 * reads every value, validates and keeps going; and the conflict rules of pylance's
 * `check_data_replacement_txn` against pylance's own concurrent commits.
 */
class DataReplacementSuite extends TwinDatasetSuite {

  /** Fragment f's file of column `z` (int32): offset + base + 1000 * f, every physical row. */
  private def files(s: Snapshot, base: Int): Seq[(Long, TableProtos.DataFile)] = {
    val z = s.schema.fields.find(_.name == "z").get
    val version = FileVersion.parse(s.dataStorageVersion).get
    s.fragments.map { f =>
      val rows = f.getPhysicalRows.toInt
      val name = DataFileNames.next()
      val out = fileIO.create(Paths.join(Paths.join(s.root, "data"), name))
      val w = new LanceFileWriter(new StreamSink(out), Seq(z), version)
      val data = new Array[Byte](4 * rows)
      (0 until rows).foreach(i => LittleEndian.putI32(data, 4 * i, i + base + 1000 * f.getId.toInt))
      w.write(Array(new FixedWidthArray(rows, null, 4, data)))
      val done =
        try w.finish()
        finally w.close()
      f.getId -> NewDataFile(
        name,
        done.fieldIds,
        done.columnIndices,
        version.major,
        version.minor,
        done.sizeBytes,
        done.numRows
      ).toProto
    }
  }

  /** pylance's (address, z) of every row: z must be what `files` wrote there. */
  private def assertValues(p: java.nio.file.Path, base: Int): Unit = {
    val rows = pylance("z_values", p).elements().asScala.toSeq
    assert(rows.nonEmpty)
    rows.foreach { r =>
      val addr = r.get(0).asLong
      assert(r.get(1).asInt == (addr & 0xffffffffL) + base + 1000 * (addr >>> 32), r)
    }
  }

  for (stable <- Seq(false, true)) {
    test(s"a column added without values gets them, then new ones (stable row ids: $stable)") {
      val (ours, _) = twins(stable)
      pylance("add_null_columns", ours, jlist(jlist("z", "int32")))
      commit(ours, s => DataReplacement(files(s, 0)))
      assertValues(ours, 0)
      commit(ours, s => DataReplacement(files(s, 7)))
      assertValues(ours, 7)
      assert(latest(ours).fragments.forall(_.getFilesCount == 2))
      val after = pylance("keep_going", ours)
      assert(after.get("valid").asBoolean())
    }
  }

  test("files of different fields, or fields stored with others, are refused") {
    val (ours, _) = twins()
    val s = latest(ours)
    val v = s.fragments.head.getFiles(0)
    val e = intercept[LanceUnsupportedException](
      commit(
        ours,
        _ =>
          DataReplacement(Seq(s.fragments.head.getId -> v.toBuilder
            .clearFields().addFields(1).build()))
      )
    )
    assert(e.getMessage.contains("stores") || e.getMessage.contains("hold them"))
  }

  /** What pylance commits before our DataReplacement, read at the version before it. */
  private val rules: Seq[(String, java.nio.file.Path => Unit)] = Seq(
    "pylance appends" -> (p => pylance("append_current", p, 2)),
    "pylance deletes a row" -> (p => pylance("delete", p, "id = 4")),
    "pylance deletes a whole fragment" -> (p => pylance("delete", p, "id >= 1000 AND id < 1003")),
    "pylance updates a row" -> (p => pylance("update", p, "id = 4")),
    "pylance indexes another column" -> (p => pylance("create_index", p, "n", "n_idx")),
    "pylance indexes the replaced column" -> (p => pylance("create_index", p, "z", "z_idx")),
    "pylance drops another column" -> (p => pylance("drop_columns", p, jlist("v"))),
    "pylance drops the replaced column" -> (p => pylance("drop_columns", p, jlist("z"))),
    "pylance adds a column" -> (p => pylance("add_null_columns", p, jlist(jlist("y", "int32")))),
    "pylance compacts" -> (p => pylance("compact", p, Map[String, Any]().asJava))
  )

  for ((what, theirs) <- rules) {
    test(s"$what, then our DataReplacement from the older version: as pylance's own") {
      val (ours, ref) = twins()
      Seq(ours, ref).foreach { p =>
        pylance("appends", p, 2, 3)
        pylance("add_null_columns", p, jlist(jlist("z", "int32")))
      }
      val read = latest(ours)
      val op = DataReplacement(files(read, 0))
      Seq(ours, ref).foreach(theirs)
      val want = pylance("stale_replace_z", ref, Long.box(read.version), Int.box(0)).asText
      assert(outcome(ours, read, op) == want)
      assertSameJson("after both", describe(ours), describe(ref))
      if (want == "ok") assertValues(ours, 0)
    }
  }
}
